//! A forest plot of a comparison (`vernier compare`): per configuration the ratio NEW/BASE
//! with the interval its verdict uses, coloured by that verdict, against the line of no
//! change and the threshold band, with the geometric mean of the ratios and its interval as the
//! last row. Every number is `vernier_analysis::compare_calibrated`'s, as `compare` prints it.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vernier_analysis::{change_text, CompareReport, Comparison, Verdict};

use crate::labels::{config_parts, distinguish, join_config};
use crate::style::{self, FASTER, NEUTRAL, SLOWER, WITHHELD};
use crate::{render, Draw, Format, OrDraw, PlotError, Size};

/// The forest plot of `report`.
pub fn forest(
    report: &CompareReport,
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if report.comparisons.is_empty() {
        return Err(PlotError::Empty(
            "no configuration is on both sides of the comparison".into(),
        ));
    }
    render(&Forest { report, title }, format, size)
}

/// How a row is drawn: its colour, and whether its point is filled. Equivalent is a filled
/// grey point; an inconclusive verdict a hollow one, a withheld verdict (contaminated runs) a
/// hollow one in its own colour, so that neither reads as "no change".
fn verdict_look(c: &Comparison) -> (RGBColor, bool) {
    if c.withheld().is_some() {
        return (WITHHELD, false);
    }
    match c.verdict {
        Verdict::Faster => (FASTER, true),
        Verdict::Slower => (SLOWER, true),
        Verdict::Equivalent => (NEUTRAL, true),
        Verdict::Inconclusive => (NEUTRAL, false),
    }
}

/// The chart's margin in pixels on every side but the bottom, where the lines under the axis
/// are.
const MARGIN: u32 = 12;
/// The height in pixels of the tick labels under the axis.
const TICK_LABELS: u32 = 30;
/// The height in pixels of a line of text under the axis.
const LINE_HEIGHT: u32 = 24;

struct Forest<'a> {
    report: &'a CompareReport,
    title: &'a str,
}

impl Draw for Forest<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let r = self.report;
        let rows = r.comparisons.len() + usize::from(r.summary.geomean_ratio.is_some());
        let t = r.threshold;
        let mut lo = 1.0 / (1.0 + t);
        let mut hi = 1.0 + t;
        for c in &r.comparisons {
            for v in [Some(c.ratio), c.ratio_ci_low, c.ratio_ci_high]
                .into_iter()
                .flatten()
            {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        for v in [r.summary.geomean_ci_low, r.summary.geomean_ci_high]
            .into_iter()
            .flatten()
        {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let (lo, hi) = style::padded(lo, hi, 0.08);
        // Each row is named by what tells its configuration from the others (the benchmark
        // too when they differ in it), what all share said once under the axis.
        let named: Vec<Vec<String>> = r
            .comparisons
            .iter()
            .map(|c| {
                let mut parts = vec![c.benchmark.clone()];
                parts.extend(config_parts(&c.options, &c.loads));
                parts
            })
            .collect();
        let (common, own) = distinguish(&named);
        let body = style::titled(root, self.title)?;
        // Configuration names with their change and verdict on the left, two fifths of the
        // width; the plot right of them,
        // inside the chart's margins.
        let (body_width, body_height) = body.dim_in_pixel();
        let label_width = (body_width * 2 / 5).min(560);
        let plot_width = body_width.saturating_sub(label_width + 2 * MARGIN);
        // Under the axis, its caption (on two lines where one is too narrow, so that it stays
        // whole) and, on a line of its own, what every row shares: no shared options can
        // crowd the caption out.
        let font = style::axis_label();
        let ratio = format!(
            "ratio NEW/BASE with its {} interval",
            vernier_model::level_percent(r.level)
        );
        let band = format!("(band: ±{:.0}% threshold)", t * 100.0);
        let whole = format!("{ratio} {band}");
        let mut lines = if style::text_width(&whole, &font) <= plot_width {
            vec![whole]
        } else {
            vec![ratio, band]
        };
        if !own.iter().all(Vec::is_empty) && !common.is_empty() {
            lines.push(format!("each configuration: {}", join_config(&common)));
        }
        // A line wider than the plot moves left under the configurations' names.
        let room = body_width.saturating_sub(2 * MARGIN);
        let lines: Vec<String> = lines.iter().map(|l| style::fit(l, room, &font)).collect();
        // One more line for the legend.
        let footer_height = LINE_HEIGHT * (lines.len() as u32 + 1) + MARGIN;
        let (body, footer) = body.split_vertically(body_height.saturating_sub(footer_height));
        let mut chart = ChartBuilder::on(&body)
            .margin(MARGIN)
            .margin_bottom(0)
            .x_label_area_size(TICK_LABELS)
            .y_label_area_size(label_width)
            .build_cartesian_2d(lo..hi, -0.5f64..(rows as f64 - 0.5))
            .or_draw()?;
        chart
            .configure_mesh()
            // No minor grid: the major lines are enough to read a value.
            .light_line_style(TRANSPARENT)
            .disable_y_mesh()
            .y_labels(0)
            .label_style(style::tick())
            .draw()
            .or_draw()?;
        let (columns, _) = chart.plotting_area().get_pixel_range();
        let left = footer.get_base_pixel().0;
        let (centre, right) = ((columns.start + columns.end) / 2 - left, columns.end - left);
        for (i, line) in lines.iter().enumerate() {
            let half = (style::text_width(line, &font) / 2) as i32;
            let centre = centre.min(right - half);
            footer
                .draw(&Text::new(
                    line.as_str(),
                    (centre, (LINE_HEIGHT * i as u32) as i32),
                    font.pos(Pos::new(HPos::Center, VPos::Top)),
                ))
                .or_draw()?;
        }
        let top = rows as f64 - 0.5;
        chart
            .draw_series([Rectangle::new(
                [(1.0 / (1.0 + t), -0.5), (1.0 + t, top)],
                NEUTRAL.mix(0.12).filled(),
            )])
            .or_draw()?;
        chart
            .draw_series([PathElement::new(
                vec![(1.0, -0.5), (1.0, top)],
                BLACK.stroke_width(1),
            )])
            .or_draw()?;
        // The first comparison on top.
        let y = |i: usize| (rows - 1 - i) as f64;
        // Per row: its height, its name and what follows the name (the verdict).
        let mut labels: Vec<(f64, String, String)> = Vec::new();
        for (i, c) in r.comparisons.iter().enumerate() {
            let (colour, filled) = verdict_look(c);
            if let (Some(l), Some(h)) = (c.ratio_ci_low, c.ratio_ci_high) {
                chart
                    .draw_series([PathElement::new(
                        vec![(l, y(i)), (h, y(i))],
                        colour.stroke_width(3),
                    )])
                    .or_draw()?;
            }
            let point = if filled {
                colour.filled()
            } else {
                colour.stroke_width(3)
            };
            chart
                .draw_series([Circle::new((c.ratio, y(i)), 6, point)])
                .or_draw()?;
            let name = if own[i].is_empty() {
                c.label()
            } else {
                join_config(&own[i])
            };
            // The change beside its name, as `compare` prints it.
            labels.push((
                y(i),
                name,
                format!("  {} {}", change_text(c.ratio), c.verdict_word()),
            ));
        }
        if let Some(g) = r.summary.geomean_ratio {
            let i = r.comparisons.len();
            if let (Some(l), Some(h)) = (r.summary.geomean_ci_low, r.summary.geomean_ci_high) {
                chart
                    .draw_series([PathElement::new(
                        vec![(l, y(i)), (h, y(i))],
                        BLACK.stroke_width(3),
                    )])
                    .or_draw()?;
            }
            let d = (hi - lo) * 0.012;
            chart
                .draw_series([Polygon::new(
                    vec![
                        (g - d, y(i)),
                        (g, y(i) + 0.25),
                        (g + d, y(i)),
                        (g, y(i) - 0.25),
                    ],
                    BLACK.filled(),
                )])
                .or_draw()?;
            labels.push((
                y(i),
                format!("geometric mean of {}", r.summary.geomean_of),
                String::new(),
            ));
        }
        // A name too long for the room left of the axis is shortened, its verdict kept.
        let font = style::tick();
        let room = label_width.saturating_sub(2 * MARGIN);
        for (y, name, after) in labels {
            let (px, py) = chart.backend_coord(&(lo, y));
            let name = style::fit(
                &name,
                room.saturating_sub(style::text_width(&after, &font)),
                &font,
            );
            root.draw(&Text::new(
                format!("{name}{after}"),
                (px - 10, py),
                font.pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .or_draw()?;
        }
        // The legend on the last line under the axis, outside the data.
        let entries = [
            (FASTER, true, "faster"),
            (SLOWER, true, "slower"),
            (NEUTRAL, true, "equivalent"),
            (NEUTRAL, false, "inconclusive"),
            (WITHHELD, false, "withheld"),
        ];
        let legend_font = style::tick();
        const MARK: i32 = 18;
        const GAP: i32 = 22;
        let widths: Vec<i32> = entries
            .iter()
            .map(|(_, _, name)| MARK + style::text_width(name, &legend_font) as i32)
            .collect();
        let total = widths.iter().sum::<i32>() + GAP * (entries.len() as i32 - 1);
        // Under the plot when it fits there, else centred in the whole width.
        let width = footer.dim_in_pixel().0 as i32;
        let mut x = (centre - total / 2).min(width - total).max(0);
        let y = (LINE_HEIGHT * lines.len() as u32) as i32 + LINE_HEIGHT as i32 / 2;
        for ((colour, filled, name), width) in entries.iter().zip(&widths) {
            let mark = if *filled {
                colour.filled()
            } else {
                colour.stroke_width(3)
            };
            footer.draw(&Circle::new((x + 6, y), 6, mark)).or_draw()?;
            footer
                .draw(&Text::new(
                    *name,
                    (x + MARK, y),
                    legend_font.pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .or_draw()?;
            x += width + GAP;
        }
        Ok(())
    }
}
