//! Plots of the benchmark tables (the one module that uses the plotting crate).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// Labels per second against lines of code, log-log, one colour per series; points are
/// (series, lines of code, labels per second).
pub fn scaling(out: &Path, points: &[(String, f64, f64)]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", out.display());
    let root = SVGBackend::new(out, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let max_x = points.iter().map(|p| p.1).fold(10.0, f64::max) * 2.0;
    let max_y = points.iter().map(|p| p.2).fold(1.0, f64::max) * 2.0;
    let min_y = points
        .iter()
        .map(|p| p.2)
        .filter(|y| *y > 0.0)
        .fold(max_y, f64::min)
        / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "covprune: labels decided per second against file size",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (5f64..max_x).log_scale(),
            (min_y.max(1e-3)..max_y).log_scale(),
        )
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("non-blank lines of code (log)")
        .y_desc("compiled labels / wall second (log)")
        .draw()
        .map_err(|e| err(&e))?;
    let mut series: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (s, x, y) in points {
        if *y > 0.0 {
            series.entry(s.as_str()).or_default().push((*x, *y));
        }
    }
    for (i, (name, pts)) in series.into_iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        chart
            .draw_series(
                pts.iter()
                    .map(|&(x, y)| Circle::new((x, y), 4, colour.filled())),
            )
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| Circle::new((x, y), 4, colour.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
