//! A configuration's results over time (`vernier history`, docs/history.md): each session's
//! median with its interval as an error bar, oldest first, and the change points marked by a
//! vertical line labelled with the step's ratio and verdict, coloured by direction.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::{Direction, HistorySeries, Verdict};
use vernier_report::units::{self, TimeForm, Zone};

use crate::labels::distinguish;
use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Size};

/// The series of session medians of `series` with its change points.
pub fn history(
    series: &HistorySeries,
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if series.points.is_empty() {
        return Err(PlotError::Empty(format!(
            "{} on {} has no session with a median",
            series.label(),
            series.host
        )));
    }
    render(&History { series, title }, format, size)
}

/// The steps of bisection `st` (`vernier bisect report --plot` and the site's bisection
/// pages): the level of each measured commit in commit order with its interval, the first bad
/// commit marked as a step ([`vernier_analysis::bisect::BisectState::series`]).
pub fn bisection(
    st: &vernier_analysis::bisect::BisectState,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    let id = st.bisection.id.to_string();
    let title = format!("bisection {}: level by commit", &id[..8]);
    history(&st.series(), &title, format, size)
}

/// What tells each session of `series` apart on the x axis: the tags whose values differ
/// among the sessions (`kernel=6.9`), else the day it started (UTC), with the time when two
/// share a day.
fn session_labels(series: &HistorySeries) -> Vec<String> {
    let tags: Vec<Vec<String>> = series
        .points
        .iter()
        .map(|p| p.tags.iter().map(|(k, v)| format!("{k}={v}")).collect())
        .collect();
    let (_, own) = distinguish(&tags);
    if series.points.len() > 1 && own.iter().all(|o| !o.is_empty()) {
        return own.iter().map(|o| o.join(",")).collect();
    }
    let at =
        |p: &vernier_analysis::HistoryPoint, form| units::time(p.started_at_ns, Zone::Utc, form);
    let days: Vec<String> = series.points.iter().map(|p| at(p, TimeForm::Day)).collect();
    let distinct = days.iter().collect::<std::collections::BTreeSet<_>>().len();
    if distinct == days.len() {
        days
    } else {
        series
            .points
            .iter()
            .map(|p| at(p, TimeForm::MonthMinute))
            .collect()
    }
}

struct History<'a> {
    series: &'a HistorySeries,
    title: &'a str,
}

impl Draw for History<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let s = self.series;
        let body = style::titled(root, self.title)?;
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in &s.points {
            for y in [Some(p.median), p.ci_low, p.ci_high].into_iter().flatten() {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
        let n = s.points.len() as f64;
        let (y0, y1) = style::padded(y0, y1, 0.06);
        // Room above the points for the steps' labels.
        let y1 = y1 + (y1 - y0) * 0.15;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(style::y_label_area(y0, y1))
            .build_cartesian_2d(-0.5..n - 0.5, y0..y1)
            .or_draw()?;
        let plot_width = chart.plotting_area().dim_in_pixel().0;
        chart
            .configure_mesh()
            // No minor grid: the major lines are enough to read a value.
            .light_line_style(TRANSPARENT)
            .label_style(style::tick())
            .axis_desc_style(style::axis_label())
            .x_desc(style::axis_caption(
                &format!("session, oldest first, on {}", s.host),
                plot_width,
            ))
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| style::compact(*v, y0, y1))
            .y_desc(format!(
                "median {} (bar: its interval)",
                style::with_unit(&s.metric, &s.unit)
            ))
            .draw()
            .or_draw()?;
        // A label under each session (every k-th when they crowd), in the room of its slot.
        let labels = session_labels(s);
        let room = (f64::from(plot_width) / n).max(1.0);
        let every = (70.0 / room).ceil().max(1.0) as usize;
        for (i, label) in labels.iter().enumerate().step_by(every) {
            let (px, py) = chart.backend_coord(&(i as f64, y0));
            root.draw(&Text::new(
                style::fit(
                    label,
                    ((room * every as f64) as u32).saturating_sub(6),
                    &style::tick(),
                ),
                (px, py + 6),
                style::tick_below(),
            ))
            .or_draw()?;
        }
        let c = colour(0);
        chart
            .draw_series(s.points.iter().enumerate().filter_map(|(i, p)| {
                let (lo, hi) = p.ci_low.zip(p.ci_high)?;
                Some(PathElement::new(
                    vec![(i as f64, lo), (i as f64, hi)],
                    c.mix(0.6).stroke_width(2),
                ))
            }))
            .or_draw()?;
        chart
            .draw_series(LineSeries::new(
                s.points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i as f64, p.median)),
                c.stroke_width(1),
            ))
            .or_draw()?;
        chart
            .draw_series(
                s.points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| Circle::new((i as f64, p.median), 4, c.filled())),
            )
            .or_draw()?
            .label("session median")
            .legend(style::legend_square(c));
        for step in &s.steps {
            let mark = match (step.change.direction, step.change.verdict) {
                (_, Verdict::Equivalent | Verdict::Inconclusive) => style::NEUTRAL,
                (Direction::Regression, _) => style::SLOWER,
                (Direction::Improvement, _) => style::FASTER,
            };
            let x = step.index as f64 - 0.5;
            chart
                .draw_series([PathElement::new(
                    vec![(x, y0), (x, y1)],
                    mark.stroke_width(2),
                )])
                .or_draw()?;
            chart
                .draw_series([Text::new(
                    format!("x{:.3} {}", step.change.ratio, step.change.verdict),
                    (x, y1 - (y1 - y0) * 0.04),
                    style::tick().color(&mark),
                )])
                .or_draw()?;
        }
        style::draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use vernier_analysis::HistoryPoint;

    use super::*;
    use crate::fixtures::svg_texts;

    fn history_of(points: &[(i64, &str)]) -> HistorySeries {
        HistorySeries {
            host: "node7".into(),
            machine_id: None,
            benchmark: "hackbench".into(),
            options: vernier_model::Options::default(),
            loads: Vec::new(),
            metric: "time".into(),
            unit: "s".into(),
            higher_is_better: false,
            points: points
                .iter()
                .enumerate()
                .map(|(i, &(day, kernel))| HistoryPoint {
                    session: uuid::Uuid::from_u128(i as u128 + 1),
                    started_at_ns: day * 86_400_000_000_000,
                    tags: BTreeMap::from([
                        ("kernel".to_string(), kernel.to_string()),
                        ("host".to_string(), "node7".to_string()),
                    ]),
                    n: 10,
                    median: 1.0 + i as f64,
                    ci_low: Some(0.9 + i as f64),
                    ci_high: Some(1.1 + i as f64),
                })
                .collect(),
            steps: Vec::new(),
            episodes: Vec::new(),
            drifts: Vec::new(),
            cumulative: None,
        }
    }

    /// The texts centred under the x axis' points of a history figure.
    fn x_labels(series: &HistorySeries) -> Vec<String> {
        crate::register_font().unwrap();
        let svg = history(series, "t", Format::Svg, Size::default()).unwrap();
        svg_texts(&svg)
            .into_iter()
            .filter(|t| !t.rotated && t.anchor == "middle" && !t.bold)
            .map(|t| t.text)
            .filter(|t| !t.starts_with("session"))
            .collect()
    }

    #[test]
    fn sessions_are_ticked_once_each_by_the_tag_that_tells_them_apart() {
        let series = history_of(&[(20_000, "6.8"), (20_001, "6.9"), (20_002, "6.10")]);
        assert_eq!(
            x_labels(&series),
            ["kernel=6.8", "kernel=6.9", "kernel=6.10"]
        );
    }

    #[test]
    fn sessions_of_equal_tags_are_ticked_by_their_day() {
        let series = history_of(&[(20_000, "6.8"), (20_001, "6.8"), (20_002, "6.8")]);
        assert_eq!(
            x_labels(&series),
            ["2024-10-04", "2024-10-05", "2024-10-06"]
        );
    }
}
