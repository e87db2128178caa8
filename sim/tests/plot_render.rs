//! Rendering tests for sim::fabric::plot: files, formats, determinism,
//! degenerate inputs. Figures go under the target tmp dir (kept for a look).

use std::path::{Path, PathBuf};

use sim::fabric::plot::{fct_cdf, goodput_series, goodput_timeline, PlotError, Series};

fn out_dir(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plot-tests").join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn check_png(p: &Path) {
    let b = std::fs::read(p).unwrap();
    assert!(b.len() > 1000, "{p:?} too small");
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "PNG magic");
    assert_eq!(&b[12..16], b"IHDR");
    let w = u32::from_be_bytes(b[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(b[20..24].try_into().unwrap());
    assert_eq!((w, h), (1200, 800));
}

fn svg_text(p: &Path) -> String {
    let s = std::fs::read_to_string(p).unwrap();
    assert!(s.contains("<svg"), "{p:?} is not SVG");
    assert!(s.contains("1200") && s.contains("800"));
    s
}

fn fcts(n: usize, scale: f64) -> Vec<f64> {
    // Deterministic, skewed, no RNG: a heavy-ish tail.
    (0..n)
        .map(|i| {
            let u = (i as f64 + 0.5) / n as f64;
            scale * (1.0 + 4.0 * u.powi(6))
        })
        .collect()
}

#[test]
fn cdf_writes_png_and_svg_with_labels() {
    let stem = out_dir("cdf").join("fct_cdf");
    let series = vec![
        ("MRC 128 EVs".to_string(), fcts(500, 10.0)),
        ("RC 1 path".to_string(), fcts(500, 25.0)),
    ];
    let paths = fct_cdf(&stem, "FCT, 8-to-1 incast", &series, false).unwrap();
    assert_eq!(paths, vec![stem.with_extension("png"), stem.with_extension("svg")]);
    check_png(&paths[0]);
    let svg = svg_text(&paths[1]);
    for s in [
        "FCT, 8-to-1 incast",
        "Flow completion time",
        "CDF",
        "MRC 128 EVs",
        "RC 1 path",
        "p99",
    ] {
        assert!(svg.contains(s), "SVG lacks {s:?}");
    }
    let stem = out_dir("cdf").join("fct_cdf_log");
    let paths = fct_cdf(&stem, "FCT (log)", &series, true).unwrap();
    check_png(&paths[0]);
    assert!(svg_text(&paths[1]).contains("log scale"));
}

#[test]
fn timeline_writes_markers_and_labels() {
    let stem = out_dir("timeline").join("goodput");
    let a: Vec<(f64, f64)> = (0..100)
        .map(|i| (i as f64, if i < 50 { 380.0 } else { 390.0 }))
        .collect();
    let b: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, if i < 50 { 380.0 } else { 0.0 })).collect();
    let series = [
        Series {
            label: "MRC 128 EVs".into(),
            points: a,
        },
        Series {
            label: "RC 1 path".into(),
            points: b,
        },
    ];
    let markers = [(50.0, "link down".to_string()), (80.0, "link up".to_string())];
    let paths = goodput_timeline(&stem, "Goodput across a link failure", &series, &markers).unwrap();
    check_png(&paths[0]);
    let svg = svg_text(&paths[1]);
    for s in [
        "Goodput across a link failure",
        "Goodput (Gb/s)",
        "Time",
        "link down",
        "link up",
        "RC 1 path",
    ] {
        assert!(svg.contains(s), "SVG lacks {s:?}");
    }
}

#[test]
fn output_is_deterministic() {
    let d = out_dir("determinism");
    let series = vec![("x".to_string(), fcts(200, 3.0))];
    let p1 = fct_cdf(&d.join("a"), "same", &series, true).unwrap();
    let p2 = fct_cdf(&d.join("b"), "same", &series, true).unwrap();
    for (x, y) in p1.iter().zip(&p2) {
        assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap(), "{x:?} vs {y:?}");
    }
    let s = [Series {
        label: "g".into(),
        points: vec![(0.0, 1.0), (1.0, 2.0)],
    }];
    let m = [(0.5, "ev".to_string())];
    let p1 = goodput_timeline(&d.join("c"), "t", &s, &m).unwrap();
    let p2 = goodput_timeline(&d.join("d"), "t", &s, &m).unwrap();
    for (x, y) in p1.iter().zip(&p2) {
        assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap(), "{x:?} vs {y:?}");
    }
}

#[test]
fn empty_and_degenerate_inputs() {
    let d = out_dir("degenerate");
    // Nothing at all, or nothing finite: NoData, no file.
    assert_eq!(fct_cdf(&d.join("e1"), "t", &[], false), Err(PlotError::NoData));
    let junk = vec![("nan".to_string(), vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY])];
    assert_eq!(fct_cdf(&d.join("e2"), "t", &junk, false), Err(PlotError::NoData));
    assert!(!d.join("e2.png").exists());
    // On a log axis, non-positive values are unusable too.
    let nonpos = vec![("z".to_string(), vec![0.0, -1.0])];
    assert_eq!(fct_cdf(&d.join("e3"), "t", &nonpos, true), Err(PlotError::NoData));
    assert_eq!(goodput_timeline(&d.join("e4"), "t", &[], &[]), Err(PlotError::NoData));
    let s = [Series {
        label: "nan".into(),
        points: vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)],
    }];
    assert_eq!(
        goodput_timeline(&d.join("e5"), "t", &s, &[(1.0, "m".into())]),
        Err(PlotError::NoData)
    );

    // A single point, all-equal values, one empty series among good ones.
    let one = vec![("one".to_string(), vec![7.0]), ("empty".to_string(), vec![])];
    for log in [false, true] {
        let p = fct_cdf(&d.join(format!("single_{log}")), "single", &one, log).unwrap();
        check_png(&p[0]);
        assert!(svg_text(&p[1]).contains("no data"));
    }
    let same = vec![("same".to_string(), vec![0.0; 10])];
    check_png(&fct_cdf(&d.join("zeros"), "zeros", &same, false).unwrap()[0]);
    let s = [Series {
        label: "pt".into(),
        points: vec![(5.0, 0.0), (f64::NAN, 3.0)],
    }];
    let p = goodput_timeline(&d.join("tl_single"), "single", &s, &[(f64::NAN, "bad".into())]).unwrap();
    check_png(&p[0]);
    assert!(!svg_text(&p[1]).contains("bad"));
    // A marker far outside the data widens the x range; negative times work.
    let s = [Series {
        label: "neg".into(),
        points: vec![(-5.0, 1.0), (5.0, 2.0)],
    }];
    check_png(&goodput_timeline(&d.join("tl_neg"), "neg", &s, &[(100.0, "late".into())]).unwrap()[0]);
    // An unusable stem is a typed error, not a panic.
    assert!(matches!(
        fct_cdf(Path::new(""), "t", &one, false),
        Err(PlotError::InvalidArgument(_))
    ));
}

#[test]
fn goodput_series_arithmetic() {
    // 1250 bytes in a 1 us bin = 10_000 bits / 1e-6 s = 10 Gb/s.
    let ev = [(0.2, 1250), (0.7, 1250), (1.5, 2500), (3.0, 125)];
    let g = goodput_series(&ev, 1.0, 4.0);
    assert_eq!(g, vec![(0.5, 20.0), (1.5, 20.0), (2.5, 0.0), (3.5, 1.0)]);
    // 10 us bins: 100_000 bytes = 800_000 bits / 10 us = 80 Gb/s.
    let g = goodput_series(&[(3.0, 100_000)], 10.0, 10.0);
    assert_eq!(g, vec![(5.0, 80.0)]);
    // A cut last bin uses its real width and centre; an event at end_us counts.
    let g = goodput_series(&[(2.0, 1000), (2.5, 1000)], 2.0, 2.5);
    assert_eq!(g, vec![(1.0, 0.0), (2.25, 2000.0 * 8.0 / 500.0)]);
    // Out of range and non-finite times are ignored.
    let g = goodput_series(&[(-1.0, 9), (f64::NAN, 9), (5.0, 9), (0.0, 125)], 1.0, 1.0);
    assert_eq!(g, vec![(0.5, 1.0)]);
    // Unusable parameters give nothing, never a panic or a huge allocation.
    assert!(goodput_series(&ev, 0.0, 4.0).is_empty());
    assert!(goodput_series(&ev, -1.0, 4.0).is_empty());
    assert!(goodput_series(&ev, f64::NAN, 4.0).is_empty());
    assert!(goodput_series(&ev, 1.0, f64::INFINITY).is_empty());
    assert!(goodput_series(&ev, 1.0, 0.0).is_empty());
    assert!(goodput_series(&ev, 1e-12, 1e6).is_empty());
    assert_eq!(goodput_series(&[], 1.0, 2.0), vec![(0.5, 0.0), (1.5, 0.0)]);
    // Huge byte counts do not overflow.
    let g = goodput_series(&[(0.0, u64::MAX), (0.1, u64::MAX)], 1.0, 1.0);
    assert!(g[0].1.is_finite() && g[0].1 > 0.0);
}
