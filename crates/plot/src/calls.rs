//! The per-call times of the `syscall` benchmark (`show --histogram` as a figure): per
//! configuration two panels one above the other on one time axis, the share of calls at each time
//! (the rows of `vernier_analysis::CallDistribution`, from the fastest call to the p99) and
//! their CDF, a line per series, so that the series of a configuration are compared on the
//! same axis. The calls slower than the rows (the slowest 1%) are not drawn: the legend gives
//! their count with the p50, p99 and maximum.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::CallDistribution;

use crate::labels::ConfigOrder;
use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Series, Size};

/// A configuration's panels: its name and the distribution of each series that ran it.
#[derive(Debug, Clone)]
pub struct CallPanel {
    pub name: String,
    pub series: Vec<(String, CallDistribution)>,
}

/// The panels of `series`: one per configuration that has per-call times in any series, in
/// the order of the figures and tables ([`ConfigOrder`]), each with a line per series that
/// ran it, in the order of `series`.
pub fn call_panels(series: &[Series]) -> Vec<CallPanel> {
    let mut configurations: Vec<&vernier_analysis::ConfigSummary> = series
        .iter()
        .flat_map(|s| &s.summaries)
        .filter(|c| c.calls.is_some())
        .collect();
    let order = ConfigOrder::of(configurations.iter().map(|c| (&c.options, &c.loads[..])));
    configurations.sort_by(|x, y| order.cmp((&x.options, &x.loads), (&y.options, &y.loads)));
    let mut panels: Vec<CallPanel> = Vec::new();
    for c in configurations {
        let name = c.label();
        if panels.iter().any(|p| p.name == name) {
            continue;
        }
        let lines = series
            .iter()
            .filter_map(|s| {
                let d = s
                    .summaries
                    .iter()
                    .find(|other| other.label() == name)?
                    .calls
                    .clone()?;
                Some((s.name.clone(), d))
            })
            .collect();
        panels.push(CallPanel {
            name,
            series: lines,
        });
    }
    panels
}

/// The per-call distributions of `panels`, two panels each.
pub fn calls(
    panels: &[CallPanel],
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if panels.iter().all(|p| p.series.is_empty()) {
        return Err(PlotError::Empty("no per-call times".into()));
    }
    render(&Calls { panels, title }, format, size)
}

/// A figure `width` wide of the panels of `configurations` configurations.
pub fn calls_size(width: u32, configurations: usize) -> Size {
    Size::for_panels(width, 2 * configurations)
}

struct Calls<'a> {
    panels: &'a [CallPanel],
    title: &'a str,
}

/// The end of the rows of `d` (the first time after its last row), ns.
fn rows_end(d: &CallDistribution) -> u64 {
    d.rows
        .last()
        .map_or(d.max_ns, |r| r.from_ns + d.step_ns)
        .max(d.min_ns + 1)
}

impl Draw for Calls<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = style::titled(root, self.title)?;
        let panels: Vec<&CallPanel> = self
            .panels
            .iter()
            .filter(|p| !p.series.is_empty())
            .collect();
        let areas = body.split_evenly((2 * panels.len(), 1));
        for (p, panel) in panels.iter().enumerate() {
            // One time axis for the series of the configuration, from the fastest call to the
            // end of the slowest series' rows (its p99).
            let lo = panel
                .series
                .iter()
                .map(|(_, d)| d.min_ns)
                .min()
                .unwrap_or(0) as f64;
            let hi = panel
                .series
                .iter()
                .map(|(_, d)| rows_end(d))
                .max()
                .unwrap_or(1) as f64;
            let pad = (hi - lo) * 0.02;
            let x = (lo - pad).max(0.0)..hi + pad;
            // Shares per the narrowest row of the panel, so that series of different row
            // widths read on one scale.
            let unit = panel
                .series
                .iter()
                .map(|(_, d)| d.step_ns.max(1))
                .min()
                .unwrap_or(1);
            let shares: Vec<Vec<(f64, f64)>> = panel
                .series
                .iter()
                .map(|(_, d)| {
                    let per =
                        100.0 * unit as f64 / (d.count.max(1) as f64 * d.step_ns.max(1) as f64);
                    d.rows
                        .iter()
                        .flat_map(|r| {
                            let y = r.count as f64 * per;
                            [(r.from_ns as f64, y), ((r.from_ns + d.step_ns) as f64, y)]
                        })
                        .collect()
                })
                .collect();
            let top = shares
                .iter()
                .flatten()
                .map(|&(_, y)| y)
                .fold(0.0, f64::max)
                .max(1e-9)
                * 1.25;
            let histogram_area =
                style::captioned(&areas[2 * p], &format!("{}: share of calls", panel.name))?;
            let mut chart = ChartBuilder::on(&histogram_area)
                .margin(12)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(x.clone(), 0f64..top)
                .or_draw()?;
            chart
                .configure_mesh()
                .light_line_style(TRANSPARENT)
                .label_style(style::tick())
                .axis_desc_style(style::axis_label())
                .x_desc("time per call (ns)")
                .y_desc(format!("% of calls per {unit} ns"))
                .draw()
                .or_draw()?;
            let (plot_width, _) = chart.plotting_area().dim_in_pixel();
            for (i, ((name, d), points)) in panel.series.iter().zip(&shares).enumerate() {
                let c = colour(i);
                let figure =
                    |n: &str, v: Option<u64>| v.map(|v| format!(" {n} {v}")).unwrap_or_default();
                let beyond = if d.beyond > 0 {
                    format!(" ({} beyond the axis)", d.beyond)
                } else {
                    String::new()
                };
                let label = format!(
                    "{name}:{}{}{} max {} ns{beyond}",
                    figure("p50", d.p50_ns),
                    figure("p99", d.p99_ns),
                    figure("p99.9", d.p99_9_ns),
                    d.max_ns
                );
                chart
                    .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                    .or_draw()?
                    .label(style::legend_entry(&label, plot_width))
                    .legend(style::legend_square(c));
            }
            style::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;

            let cdf_area = style::captioned(&areas[2 * p + 1], &format!("{}: CDF", panel.name))?;
            let mut cdf = ChartBuilder::on(&cdf_area)
                .margin(12)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(x.clone(), 0f64..100.0)
                .or_draw()?;
            cdf.configure_mesh()
                .light_line_style(TRANSPARENT)
                .label_style(style::tick())
                .axis_desc_style(style::axis_label())
                .x_desc("time per call (ns)")
                .y_desc("% of calls at most")
                .draw()
                .or_draw()?;
            for (i, (_, d)) in panel.series.iter().enumerate() {
                let total = d.count.max(1) as f64;
                let points: Vec<(f64, f64)> = std::iter::once((d.min_ns as f64, 0.0))
                    .chain(d.rows.iter().map(|r| {
                        (
                            (r.from_ns + d.step_ns) as f64,
                            100.0 * r.cumulative as f64 / total,
                        )
                    }))
                    .collect();
                cdf.draw_series(LineSeries::new(points, colour(i).stroke_width(2)))
                    .or_draw()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::svg_texts;
    use vernier_analysis::CallRow;

    fn distribution(from: u64, counts: &[u64], beyond: u64) -> CallDistribution {
        let mut cumulative = 0;
        let rows = counts
            .iter()
            .enumerate()
            .map(|(i, &count)| {
                cumulative += count;
                CallRow {
                    from_ns: from + 10 * i as u64,
                    count,
                    cumulative,
                }
            })
            .collect();
        let count = cumulative + beyond;
        CallDistribution {
            runs: 1,
            count,
            min_ns: from,
            max_ns: 5_000,
            p50_ns: Some(from + 10),
            p90_ns: None,
            p95_ns: None,
            p99_ns: Some(from + 10 * counts.len() as u64 - 10),
            p99_9_ns: None,
            mad_ns: Some(10),
            step_ns: 10,
            rows,
            beyond,
        }
    }

    #[test]
    fn series_of_a_configuration_share_one_axis_and_say_their_percentiles() {
        let panel = CallPanel {
            name: "syscall:call=getpid".into(),
            series: vec![
                ("kernel=A".into(), distribution(100, &[450, 350, 190], 10)),
                ("kernel=B".into(), distribution(200, &[450, 350, 190], 10)),
            ],
        };
        let svg = calls(&[panel], "calls", Format::Svg, calls_size(1200, 1)).unwrap();
        let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
        assert!(
            texts.contains(
                &"kernel=A: p50 110 p99 120 max 5000 ns (10 beyond the axis)".to_string()
            ),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.starts_with("kernel=B: p50 210")),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"% of calls per 10 ns".to_string()),
            "{texts:?}"
        );
        // One axis for both: it starts before A's fastest call and ends after B's rows, not at
        // the slowest call of 5000 ns.
        let ticks: Vec<f64> = texts.iter().filter_map(|t| t.parse().ok()).collect();
        assert!(ticks.iter().any(|&t| t <= 100.0), "{ticks:?}");
        assert!(ticks.iter().all(|&t| t < 400.0), "{ticks:?}");
        assert!(calls(&[], "calls", Format::Svg, calls_size(1200, 1)).is_err());
    }

    #[test]
    fn panels_group_each_configuration_across_series_in_the_tables_order() {
        let mut a =
            crate::fixtures::series("A", "syscall", &[(&[("n", 10)], 1.0), (&[("n", 2)], 1.0)]);
        let mut b =
            crate::fixtures::series("B", "syscall", &[(&[("n", 2)], 1.0), (&[("n", 10)], 1.0)]);
        for (s, from) in [(&mut a, 100), (&mut b, 200)] {
            for c in &mut s.summaries {
                c.calls = Some(distribution(from, &[5, 3], 0));
            }
        }
        // A configuration without per-call times has no panel.
        b.summaries[0].calls = None;
        let panels = call_panels(&[a, b]);
        let names: Vec<&str> = panels.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["syscall:n=2", "syscall:n=10"]);
        let lines = |p: &CallPanel| -> Vec<(String, u64)> {
            p.series
                .iter()
                .map(|(n, d)| (n.clone(), d.min_ns))
                .collect()
        };
        assert_eq!(lines(&panels[0]), [("A".to_string(), 100)]);
        assert_eq!(
            lines(&panels[1]),
            [("A".to_string(), 100), ("B".to_string(), 200)]
        );
    }
}
