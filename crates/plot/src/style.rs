//! What every figure shares: the colours of its series, its fonts and the legend's look.

use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::{OrDraw, PlotError, FONT};

/// Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2002), black last;
/// series take them in order and wrap around.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(240, 228, 66),  // yellow
    RGBColor(0, 0, 0),       // black
];

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Verdict colours of the forest plot: faster green, slower vermillion, the rest grey.
pub const FASTER: RGBColor = RGBColor(0, 158, 115);
pub const SLOWER: RGBColor = RGBColor(213, 94, 0);
pub const NEUTRAL: RGBColor = RGBColor(110, 110, 110);

pub fn title() -> TextStyle<'static> {
    (FONT, 26).into_font().style(FontStyle::Bold).into()
}

pub fn axis_label() -> TextStyle<'static> {
    (FONT, 19).into_font().into()
}

pub fn tick() -> TextStyle<'static> {
    (FONT, 16).into_font().into()
}

/// A tick label centred under its point.
pub fn tick_below() -> TextStyle<'static> {
    tick().pos(Pos::new(HPos::Center, VPos::Top))
}

pub fn legend() -> TextStyle<'static> {
    (FONT, 17).into_font().into()
}

/// A legend marker: a filled square in `c`.
pub fn legend_square(c: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled())
}

/// Shortens `text` to `max` characters with an ellipsis, for tick labels.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The range `[lo, hi]` widened by `pad` of its width on each side (a point range by 1).
pub fn padded(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    let width = hi - lo;
    if width > 0.0 {
        (lo - width * pad, hi + width * pad)
    } else {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - d, hi + d)
    }
}

/// The axis description `name (unit)`, or `name` alone without a unit.
pub fn with_unit(name: &str, unit: &str) -> String {
    if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({unit})")
    }
}

/// Draws the legend of `chart`'s labelled series at `position`, on a light box.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .label_font(legend())
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .position(position)
        .draw()
        .or_draw()
}
