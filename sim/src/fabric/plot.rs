//! Publication-style plots of simulation results (PNG and SVG).
//!
//! Pure Rust, no system libraries: `plotters` with its bitmap and SVG
//! backends, text laid out by `ab_glyph` with DejaVu Sans embedded from the
//! `dejavu` crate (Bitstream Vera licence with public-domain DejaVu
//! changes: free to redistribute). The font is registered once, at the
//! first plot, under the family name `sans-serif`.
//!
//! Every figure is written twice, `<stem>.png` (1200x800) and `<stem>.svg`
//! (same size); the functions return both paths, PNG first. Output bytes are
//! a pure function of the input (no time stamps, no randomness).
//!
//! Input hygiene: NaN and infinite values are dropped (and, on a log axis,
//! values <= 0). When nothing plottable is left in any series the function
//! returns [`PlotError::NoData`] and writes no file; a series that is empty
//! on its own is kept in the legend (marked "no data") but draws nothing. A
//! single point, or all points equal, gets a padded axis range.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

/// One line of a chart: a label for the legend and its (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Why a plot could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlotError {
    /// No finite value in any series: nothing to draw (no file written).
    #[error("no plottable data (empty input, or only NaN/inf values)")]
    NoData,
    /// An argument is unusable (for example an empty file stem).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The embedded font could not be registered.
    #[error("font registration failed: {0}")]
    Font(String),
    /// Creating a directory or writing a file failed.
    #[error("i/o error on {path}: {msg}")]
    Io { path: String, msg: String },
    /// The drawing backend reported an error.
    #[error("drawing error: {0}")]
    Drawing(String),
}

/// Width and height of every figure, in pixels.
pub const SIZE: (u32, u32) = (1200, 800);

const FONT: &str = "sans-serif";
const TITLE_PX: f64 = 34.0;
const AXIS_LABEL_PX: f64 = 26.0;
const TICK_PX: f64 = 20.0;
const LEGEND_PX: f64 = 20.0;
const NOTE_PX: f64 = 20.0;
const CDF_MAX_STEPS: usize = 1000;
const CDF_STAIR_MAX: usize = 200;
const GOODPUT_MAX_BINS: f64 = 1.0e7;

/// Okabe-Ito colour-blind-safe palette; a ninth series reuses the first
/// colour.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(240, 228, 66),  // yellow
    RGBColor(0, 0, 0),       // black
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn ensure_font() -> Result<(), PlotError> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let fonts: [(&str, FontStyle, &'static [u8]); 4] = [
            ("regular", FontStyle::Normal, dejavu::sans::regular()),
            ("bold", FontStyle::Bold, dejavu::sans::bold()),
            ("italic", FontStyle::Italic, dejavu::sans::oblique()),
            ("oblique", FontStyle::Oblique, dejavu::sans::oblique()),
        ];
        for (name, style, bytes) in fonts {
            plotters::style::register_font(FONT, style, bytes)
                .map_err(|_| format!("DejaVu Sans {name} rejected by ab_glyph"))?;
        }
        Ok(())
    })
    .clone()
    .map_err(PlotError::Font)
}

fn draw_err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Drawing(format!("{e:?}"))
}

/// `<stem>.png` and `<stem>.svg`; creates the parent directory.
fn outputs(stem: &Path) -> Result<(PathBuf, PathBuf), PlotError> {
    if stem.as_os_str().is_empty() || stem.file_name().is_none() {
        return Err(PlotError::InvalidArgument(format!(
            "file stem {stem:?} has no file name"
        )));
    }
    if let Some(dir) = stem.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| PlotError::Io {
                path: dir.display().to_string(),
                msg: e.to_string(),
            })?;
        }
    }
    let with_ext = |ext: &str| {
        let mut s = stem.as_os_str().to_owned();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    };
    Ok((with_ext("png"), with_ext("svg")))
}

/// The bitmap backend reports a failed write as a drawing error; say which
/// file, and check the file is really there.
fn check_written(path: &Path) -> Result<(), PlotError> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 => Ok(()),
        Ok(_) => Err(PlotError::Io {
            path: path.display().to_string(),
            msg: "file is empty after drawing".into(),
        }),
        Err(e) => Err(PlotError::Io {
            path: path.display().to_string(),
            msg: e.to_string(),
        }),
    }
}

/// Axis range that is never empty: pads a degenerate range.
fn padded(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        if hi > lo {
            (lo / 1.25, hi * 1.25)
        } else {
            (lo / 2.0, hi * 2.0)
        }
    } else if hi > lo {
        let pad = (hi - lo) * 0.03;
        (lo - pad, hi + pad)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    }
}

/// Nearest-rank percentile of sorted, non-empty data.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

/// Short human form of a number for legends.
fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1.0e-2..1.0e5).contains(&a) {
        format!("{v:.2e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Tick label: no trailing noise like "10.000000001".
fn fmt_tick(v: &f64) -> String {
    let v = *v;
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1.0e-3..1.0e6).contains(&a) {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

/// Log-axis tick label: only the 1, 2 and 5 of each decade are written
/// (the others keep their grid line), so the labels never crowd.
fn fmt_log_tick(v: &f64) -> String {
    if !(v.is_finite() && *v > 0.0) {
        return String::new();
    }
    let mantissa = *v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6 * m) {
        fmt_tick(v)
    } else {
        String::new()
    }
}

struct CdfLine {
    label: String,
    steps: Vec<(f64, f64)>,
    /// Infinite when that share of the flows never completed.
    p50: f64,
    p99: f64,
    /// Flows that never completed (`f64::INFINITY` in the input).
    unfinished: usize,
}

fn cdf_lines(series: &[(String, Vec<f64>)], log_x: bool) -> Vec<Option<CdfLine>> {
    series
        .iter()
        .map(|(label, values)| {
            let mut v: Vec<f64> = values
                .iter()
                .copied()
                .filter(|x| x.is_finite() && (!log_x || *x > 0.0))
                .collect();
            if v.is_empty() {
                return None;
            }
            v.sort_by(f64::total_cmp);
            let n = v.len();
            // A flow that never completed counts in the total: the curve
            // then tops out below 1 (at the completed share).
            let unfinished = values.iter().filter(|x| **x == f64::INFINITY).count();
            let total = n + unfinished;
            // Step function through (x_i, i/n) -> (x_i, (i+1)/n); thinned to
            // the first and CDF_MAX_STEPS evenly spaced ranks (the last included)
            // for big inputs: 0.1% resolution in y, p50/p99 computed exactly.
            let ranks: Vec<usize> = if n <= CDF_MAX_STEPS {
                (0..n).collect()
            } else {
                std::iter::once(0)
                    .chain((0..CDF_MAX_STEPS).map(|k| ((k + 1) * n) / CDF_MAX_STEPS - 1))
                    .collect()
            };
            // Past a few hundred steps a 3 px stair is only jagged noise:
            // join the top corners instead (same curve at this resolution).
            let stairs = ranks.len() <= CDF_STAIR_MAX;
            let mut steps = Vec::with_capacity(2 * ranks.len());
            let mut prev_y = 0.0;
            for &i in &ranks {
                let y = (i + 1) as f64 / total as f64;
                if stairs || steps.is_empty() {
                    steps.push((v[i], prev_y));
                }
                steps.push((v[i], y));
                prev_y = y;
            }
            let with_unfinished: Vec<f64> = v
                .iter()
                .copied()
                .chain(std::iter::repeat_n(f64::INFINITY, unfinished))
                .collect();
            Some(CdfLine {
                label: label.clone(),
                p50: percentile(&with_unfinished, 0.50),
                p99: percentile(&with_unfinished, 0.99),
                steps,
                unfinished,
            })
        })
        .collect()
}

macro_rules! draw_cdf {
    ($root:expr, $title:expr, $lines:expr, $xspec:expr, $log:expr) => {{
        let root = $root;
        root.fill(&WHITE).map_err(draw_err)?;
        let root = root.margin(10, 30, 10, 20);
        let mut chart = ChartBuilder::on(&root)
            .caption($title, (FONT, TITLE_PX).into_font())
            .x_label_area_size(70)
            .y_label_area_size(90)
            .build_cartesian_2d($xspec, 0.0f64..1.0f64)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.15))
            .axis_style(BLACK.mix(0.8))
            .x_desc(if $log {
                "Flow completion time (µs, log scale)"
            } else {
                "Flow completion time (µs)"
            })
            .y_desc("CDF (fraction of flows)")
            .axis_desc_style((FONT, AXIS_LABEL_PX))
            .label_style((FONT, TICK_PX))
            .x_label_formatter(if $log { &fmt_log_tick } else { &fmt_tick })
            .y_label_formatter(&|v: &f64| format!("{v:.1}"))
            .y_labels(11)
            .x_labels(10)
            .draw()
            .map_err(draw_err)?;
        // Guides at the two quantiles shown in the legend.
        let (x0, x1) = (chart.x_range().start, chart.x_range().end);
        for q in [0.5, 0.99] {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x0, q), (x1, q)],
                    6,
                    6,
                    BLACK.mix(0.35).stroke_width(1),
                ))
                .map_err(draw_err)?;
        }
        for (i, l) in $lines.iter().enumerate() {
            let c = colour(i);
            let pct = |v: f64| {
                if v.is_finite() {
                    format!("{} µs", fmt_num(v))
                } else {
                    "not reached".to_string()
                }
            };
            let label = if l.steps.is_empty() {
                format!("{}  (no data)", l.label)
            } else if l.unfinished > 0 {
                format!(
                    "{}  (p50 {}, p99 {}; {} unfinished)",
                    l.label,
                    pct(l.p50),
                    pct(l.p99),
                    l.unfinished
                )
            } else {
                format!("{}  (p50 {}, p99 {})", l.label, pct(l.p50), pct(l.p99))
            };
            chart
                .draw_series(LineSeries::new(l.steps.iter().copied(), c.stroke_width(3)))
                .map_err(draw_err)?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x - 4, y), (x + 16, y)], c.stroke_width(3)));
            if !l.steps.is_empty() {
                chart
                    .draw_series(
                        [(l.p50, 0.5), (l.p99, 0.99)]
                            .into_iter()
                            .filter(|(x, _)| x.is_finite())
                            .map(|p| Circle::new(p, 6, c.filled())),
                    )
                    .map_err(draw_err)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.5))
            .label_font((FONT, LEGEND_PX))
            .margin(15)
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
        Ok::<(), PlotError>(())
    }};
}

/// Empirical CDF of flow completion times (µs), one line per series (e.g.
/// "MRC 128 EVs", "RC 1 path"). Writes `<stem>.png` and `<stem>.svg` and
/// returns both paths (PNG first). `log_x` puts the time axis on a log
/// scale (values <= 0 are then dropped). `f64::INFINITY` is a flow that
/// never completed: it counts in its series' total, so that curve ends at
/// the completed share, below 1, and a percentile past it reads "not
/// reached" (NaN and -inf are dropped). Each line's p50 and p99 are marked
/// with a dot on the curve, dashed guides at 0.5 and 0.99, and the values in
/// the legend. Errors: [`PlotError::NoData`] when no series has a usable
/// value (nothing is written).
pub fn fct_cdf(
    stem: &Path,
    title: &str,
    series: &[(String, Vec<f64>)],
    log_x: bool,
) -> Result<Vec<PathBuf>, PlotError> {
    let lines = cdf_lines(series, log_x);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for l in lines.iter().flatten() {
        lo = lo.min(l.steps[0].0);
        hi = hi.max(l.steps[l.steps.len() - 1].0);
    }
    if !lo.is_finite() || !hi.is_finite() {
        return Err(PlotError::NoData);
    }
    // Keep empty series visible in the legend as "no data".
    let (png, svg) = outputs(stem)?;
    ensure_font()?;
    let lines: Vec<CdfLine> = lines
        .into_iter()
        .zip(series)
        .map(|(l, (label, _))| {
            l.unwrap_or(CdfLine {
                label: label.clone(),
                steps: Vec::new(),
                p50: f64::NAN,
                p99: f64::NAN,
                unfinished: 0,
            })
        })
        .collect();
    if log_x {
        let (xlo, xhi) = padded(lo, hi, true);
        draw_cdf!(
            BitMapBackend::new(&png, SIZE).into_drawing_area(),
            title,
            lines,
            (xlo..xhi).log_scale(),
            true
        )?;
        check_written(&png)?;
        draw_cdf!(
            SVGBackend::new(&svg, SIZE).into_drawing_area(),
            title,
            lines,
            (xlo..xhi).log_scale(),
            true
        )?;
    } else {
        let (xlo, xhi) = if lo >= 0.0 {
            (0.0, padded(lo, hi, false).1)
        } else {
            padded(lo, hi, false)
        };
        draw_cdf!(
            BitMapBackend::new(&png, SIZE).into_drawing_area(),
            title,
            lines,
            xlo..xhi,
            false
        )?;
        check_written(&png)?;
        draw_cdf!(
            SVGBackend::new(&svg, SIZE).into_drawing_area(),
            title,
            lines,
            xlo..xhi,
            false
        )?;
    }
    check_written(&svg)?;
    Ok(vec![png, svg])
}

/// Bin byte deliveries into a goodput time series.
///
/// `events` are `(time_us, bytes)`; bins are `[k*bin_us, (k+1)*bin_us)` for
/// `k = 0..ceil(end_us / bin_us)`, the last one cut at `end_us` (and closed:
/// an event at exactly `end_us` counts). Each point is `(bin centre in µs,
/// Gb/s)` with Gb/s = bytes * 8 / (width_us * 1e3); a cut last bin uses its
/// real width and centre. Events with a non-finite time, before 0 or after
/// `end_us` are ignored. Empty bins give 0 Gb/s. A non-finite or
/// non-positive `bin_us` or `end_us`, or more than 10^7 bins, gives an
/// empty vector.
pub fn goodput_series(events: &[(f64, u64)], bin_us: f64, end_us: f64) -> Vec<(f64, f64)> {
    if !(bin_us.is_finite() && end_us.is_finite() && bin_us > 0.0 && end_us > 0.0) {
        return Vec::new();
    }
    let nbins_f = (end_us / bin_us).ceil();
    if !(1.0..=GOODPUT_MAX_BINS).contains(&nbins_f) {
        return Vec::new();
    }
    let nbins = nbins_f as usize;
    let mut bytes = vec![0u128; nbins];
    for &(t, b) in events {
        if !t.is_finite() || t < 0.0 || t > end_us {
            continue;
        }
        let k = ((t / bin_us).floor() as usize).min(nbins - 1);
        bytes[k] += u128::from(b);
    }
    bytes
        .iter()
        .enumerate()
        .map(|(k, &b)| {
            let start = k as f64 * bin_us;
            let end = ((k + 1) as f64 * bin_us).min(end_us);
            let width = end - start;
            let gbps = if width > 0.0 {
                b as f64 * 8.0 / (width * 1.0e3)
            } else {
                0.0
            };
            ((start + end) / 2.0, gbps)
        })
        .collect()
}

macro_rules! draw_goodput {
    ($root:expr, $title:expr, $lines:expr, $markers:expr, $x:expr, $y:expr) => {{
        let root = $root;
        root.fill(&WHITE).map_err(draw_err)?;
        let root = root.margin(10, 30, 10, 20);
        let mut chart = ChartBuilder::on(&root)
            .caption($title, (FONT, TITLE_PX).into_font())
            .x_label_area_size(70)
            .y_label_area_size(90)
            .build_cartesian_2d($x, $y)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.15))
            .axis_style(BLACK.mix(0.8))
            .x_desc("Time (µs)")
            .y_desc("Goodput (Gb/s)")
            .axis_desc_style((FONT, AXIS_LABEL_PX))
            .label_style((FONT, TICK_PX))
            .x_label_formatter(&fmt_tick)
            .y_label_formatter(&fmt_tick)
            .x_labels(12)
            .y_labels(10)
            .draw()
            .map_err(draw_err)?;
        let (y0, y1) = (chart.y_range().start, chart.y_range().end);
        for (t, _) in $markers.iter() {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(*t, y0), (*t, y1)],
                    8,
                    6,
                    BLACK.mix(0.7).stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
        for (i, (label, pts)) in $lines.iter().enumerate() {
            let c = colour(i);
            let label = if pts.is_empty() {
                format!("{label}  (no data)")
            } else {
                label.to_string()
            };
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(3)))
                .map_err(draw_err)?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x - 4, y), (x + 16, y)], c.stroke_width(3)));
            if pts.len() == 1 {
                chart
                    .draw_series(std::iter::once(Circle::new(pts[0], 5, c.filled())))
                    .map_err(draw_err)?;
            }
        }
        // Marker labels last, on a light box, so lines never cross them.
        for (i, (t, label)) in $markers.iter().enumerate() {
            // Stagger labels of nearby markers so they do not overlap.
            let row = (i % 3) as i32;
            // Labels of markers near the right edge go left of their line.
            let (x0, x1) = (chart.x_range().start, chart.x_range().end);
            let right = (*t - x0) > 0.8 * (x1 - x0);
            let (dx, anchor) = if right {
                (-6, Pos::new(HPos::Right, VPos::Top))
            } else {
                (6, Pos::new(HPos::Left, VPos::Top))
            };
            let style = (FONT, NOTE_PX).into_font().color(&BLACK).pos(anchor);
            let (w, h) = chart
                .plotting_area()
                .estimate_text_size(label, &style)
                .map_err(draw_err)?;
            let (w, h) = (w as i32, h as i32);
            let top = 6 + 24 * row;
            let (bx0, bx1) = if right {
                (dx - w - 3, dx + 3)
            } else {
                (dx - 3, dx + w + 3)
            };
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((*t, y1))
                        + Rectangle::new([(bx0, top - 2), (bx1, top + h + 2)], WHITE.mix(0.85).filled())
                        + Text::new(label.clone(), (dx, top), style),
                ))
                .map_err(draw_err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.5))
            .label_font((FONT, LEGEND_PX))
            .margin(15)
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
        Ok::<(), PlotError>(())
    }};
}

/// Goodput (Gb/s, y) over time (µs, x), one line per series, with vertical
/// dashed markers and labels for events (e.g. "link down" at 50 µs).
/// Writes `<stem>.png` and `<stem>.svg` and returns both paths (PNG first).
/// Points with a non-finite coordinate are dropped (the line joins across
/// them); points are drawn in x order. Markers at non-finite times are
/// dropped; the x range covers the data and the markers. The y axis starts
/// at 0 (lower when a value is negative). Errors: [`PlotError::NoData`]
/// when no series has a finite point (nothing is written).
pub fn goodput_timeline(
    stem: &Path,
    title: &str,
    series: &[Series],
    markers: &[(f64, String)],
) -> Result<Vec<PathBuf>, PlotError> {
    let lines: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let mut pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (s.label.as_str(), pts)
        })
        .collect();
    let markers: Vec<(f64, String)> = markers.iter().filter(|(t, _)| t.is_finite()).cloned().collect();
    let (mut xlo, mut xhi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut ylo, mut yhi) = (0.0f64, f64::NEG_INFINITY);
    for (_, pts) in &lines {
        for &(x, y) in pts {
            xlo = xlo.min(x);
            xhi = xhi.max(x);
            ylo = ylo.min(y);
            yhi = yhi.max(y);
        }
    }
    if !xlo.is_finite() {
        return Err(PlotError::NoData);
    }
    for (t, _) in &markers {
        xlo = xlo.min(*t);
        xhi = xhi.max(*t);
    }
    let (png, svg) = outputs(stem)?;
    ensure_font()?;
    let (xlo, xhi) = if xlo >= 0.0 && xhi > 0.0 {
        (0.0, padded(xlo, xhi, false).1)
    } else {
        padded(xlo, xhi, false)
    };
    // Headroom above the highest line for marker labels and the legend.
    let (ylo, yhi) = if yhi > ylo {
        (if ylo < 0.0 { ylo * 1.1 } else { 0.0 }, yhi * 1.15)
    } else {
        padded(ylo, yhi, false)
    };
    let (ylo, yhi) = if yhi > ylo { (ylo, yhi) } else { (ylo, ylo + 1.0) };
    draw_goodput!(
        BitMapBackend::new(&png, SIZE).into_drawing_area(),
        title,
        lines,
        markers,
        xlo..xhi,
        ylo..yhi
    )?;
    check_written(&png)?;
    draw_goodput!(
        SVGBackend::new(&svg, SIZE).into_drawing_area(),
        title,
        lines,
        markers,
        xlo..xhi,
        ylo..yhi
    )?;
    check_written(&svg)?;
    Ok(vec![png, svg])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow that never completed keeps the curve below 1: 3 of 4 done
    /// tops out at 0.75, and p99 is not reached.
    #[test]
    fn unfinished_flows_keep_the_cdf_below_one() {
        let series = vec![("x".to_string(), vec![3.0, 1.0, f64::INFINITY, 2.0])];
        let line = cdf_lines(&series, false).remove(0).unwrap();
        let top = line.steps.iter().map(|s| s.1).fold(0.0, f64::max);
        assert_eq!(top, 0.75);
        assert_eq!(line.unfinished, 1);
        assert_eq!(line.p50, 2.0);
        assert!(line.p99.is_infinite());
        // All done: the curve reaches 1.
        let done = vec![("y".to_string(), vec![3.0, 1.0, 2.0])];
        let line = cdf_lines(&done, false).remove(0).unwrap();
        assert_eq!(line.steps.last().unwrap().1, 1.0);
    }
}
