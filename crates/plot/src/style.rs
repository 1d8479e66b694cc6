//! What every figure shares: the colours of its series, its fonts and the legend's look.

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vernier_report::units;

use crate::{OrDraw, PlotError, FONT};

/// Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2002) without its
/// yellow, which is not seen on white, black last; series take them in order and wrap around.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 0, 0),       // black
];

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Verdict colours of the forest plot: faster green, slower vermillion, equivalent and
/// inconclusive grey (filled and hollow).
pub const FASTER: RGBColor = RGBColor(0, 158, 115);
pub const SLOWER: RGBColor = RGBColor(213, 94, 0);
pub const NEUTRAL: RGBColor = RGBColor(110, 110, 110);
/// A verdict withheld for contaminated runs: Okabe-Ito's reddish purple, apart from the grey
/// of no change.
pub const WITHHELD: RGBColor = RGBColor(204, 121, 167);

/// The sizes of a title, largest first: a title too wide for the figure on one line is
/// wrapped to two, set smaller until both lines fit.
const TITLE_SIZES: [f64; 6] = [26.0, 24.0, 22.0, 20.0, 18.0, 16.0];

/// Pixels kept free left and right of a title.
const TITLE_MARGIN: u32 = 8;

/// Pixels above and below a title, as plotters' `DrawingArea::titled` keeps them.
const TITLE_PADDING: i32 = 5;

/// The title's style at `size`, in DejaVu Sans Bold. Made with the weight rather than by
/// `FontDesc::style`, which keeps the regular font's data: the title would be measured (and
/// drawn in PNG) regular while SVG names it bold, and a browser's wider bold ran past the edges.
pub(crate) fn title_at(size: f64) -> TextStyle<'static> {
    FontDesc::new(FONT.into(), size, FontStyle::Bold).into()
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

/// The part of a plotting area's width a legend entry may take.
const LEGEND_SHARE: f64 = 0.45;

/// `text` as a legend entry of a plotting area `plot_width` pixels wide: shortened with an
/// ellipsis beyond [`LEGEND_SHARE`] of the width, so that the legend leaves the data visible.
pub fn legend_entry(text: &str, plot_width: u32) -> String {
    fit(
        text,
        (f64::from(plot_width) * LEGEND_SHARE) as u32,
        &legend(),
    )
}

/// The lines of a panel's caption in an area `area_width` pixels wide (less the chart's margins
/// of 12): one when it fits; else two, broken at a space ([`break_line`]), the second shortened
/// with an ellipsis only when it still does not fit, so that a long configuration label keeps
/// the options that tell it apart.
pub fn panel_caption(text: &str, area_width: u32) -> Vec<String> {
    let max = area_width.saturating_sub(24);
    let style = axis_label();
    if text_width(text, &style) <= max {
        return vec![text.to_string()];
    }
    let (first, rest) = break_line(text, max, &style);
    vec![first, fit(&rest, max, &style)]
}

/// Draws `text` as a panel's caption ([`panel_caption`]) centred at the top of `area`, and
/// returns the area below it, on which the panel's chart is built. A panel lower than
/// [`crate::MIN_PANEL_HEIGHT`] (a figure drawn smaller than its panels need) keeps its caption
/// to one line, shortened with an ellipsis, leaving its chart the room for its axes.
pub fn captioned<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
) -> Result<DrawingArea<DB, Shift>, PlotError>
where
    DB::ErrorType: 'static,
{
    let (width, height) = area.dim_in_pixel();
    let style = axis_label().pos(Pos::new(HPos::Center, VPos::Top));
    let mut lines = panel_caption(text, width);
    if height < crate::MIN_PANEL_HEIGHT && lines.len() > 1 {
        lines = vec![fit(text, width.saturating_sub(24), &axis_label())];
    }
    // The margin the chart keeps above itself.
    let mut y = 12;
    for line in lines {
        let (_, height) = area.estimate_text_size(&line, &style).or_draw()?;
        area.draw_text(&line, &style, (width as i32 / 2, y))
            .or_draw()?;
        y += height as i32 + 2;
    }
    Ok(area.split_vertically(y).1)
}

/// An axis' caption along a side `length` pixels long, shortened with an ellipsis when longer.
pub fn axis_caption(text: &str, length: u32) -> String {
    fit(text, length, &axis_label())
}

/// An axis' caption `name (unit)` along a side `length` pixels long: the name shortened with
/// an ellipsis when the whole is longer, the unit always whole, so that the axis still says
/// what its numbers count.
pub fn axis_caption_with_unit(name: &str, unit: &str, length: u32) -> String {
    if unit.is_empty() {
        return axis_caption(name, length);
    }
    let whole = with_unit(name, unit);
    if text_width(&whole, &axis_label()) <= length {
        return whole;
    }
    let unit = format!(" ({unit})");
    let room = length.saturating_sub(text_width(&unit, &axis_label()));
    format!("{}{unit}", fit(name, room, &axis_label()))
}

/// A tick label of `v` on an axis from `lo` to `hi` that stays short however large the values
/// (a memory counter's bytes): on an axis that reaches a million, every label scaled by the
/// one decimal prefix of its largest value (`20G` for 2e10), with as many decimals as ticks
/// about a tenth of the axis apart, or half that, need to differ.
pub fn compact(v: f64, lo: f64, hi: f64) -> String {
    let step = (hi - lo) / 10.0;
    let largest = lo.abs().max(hi.abs());
    match units::unit_for(units::DECIMAL, largest, 1.0) {
        Some((prefix, scale)) => format!("{}{prefix}", trimmed(v / scale, step / scale)),
        None => trimmed(v, step),
    }
}

/// The pixels left of a plotting area for a y axis from `lo` to `hi`: its widest tick label as
/// [`compact`] writes them, and beside the labels the tick marks, gaps and the axis' caption
/// (a line of [`axis_label`] type), so that the caption never runs into a label.
pub fn y_label_area(lo: f64, hi: f64) -> u32 {
    let widest = (0..=20)
        .map(|i| lo + (hi - lo) * f64::from(i) / 20.0)
        .map(|v| text_width(&compact(v, lo, hi), &tick()))
        .max()
        .unwrap_or(0);
    widest + 50
}

/// `v` with the decimals that a difference of `step` shows and one more, for ticks at half
/// of it (at most 6), without trailing zeros.
fn trimmed(v: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() {
        (1.0 - step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        0
    };
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    if text == "-0" {
        "0".to_string()
    } else {
        text
    }
}

/// A legend marker: a filled square in `c`.
pub fn legend_square(c: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled())
}

/// The width in pixels of `text` set in `style`, as plotters lays it out with the figure's font
/// (DejaVu Sans), the layout that places the text in SVG and PNG alike.
pub fn text_width(text: &str, style: &TextStyle) -> u32 {
    match style.font.box_size(text) {
        Ok((width, _)) => width,
        // Without the font's metrics (`render` refuses to draw then), a character per em.
        Err(_) => (text.chars().count() as f64 * style.font.get_size()) as u32,
    }
}

/// `text` when it is at most `max` pixels wide in `style`; else its longest beginning that
/// fits with an ellipsis after it (whole characters: no glyph is cut), or nothing when not even
/// the ellipsis fits.
pub fn fit(text: &str, max: u32, style: &TextStyle) -> String {
    if text_width(text, style) <= max {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let shortened = |n: usize| -> String {
        let mut s: String = chars[..n].iter().collect::<String>().trim_end().to_string();
        s.push('…');
        s
    };
    if text_width(&shortened(0), style) > max {
        return String::new();
    }
    // The longest beginning that fits: `fits` characters do, `too_many` do not.
    let (mut fits, mut too_many) = (0, chars.len());
    while too_many - fits > 1 {
        let mid = (fits + too_many) / 2;
        if text_width(&shortened(mid), style) <= max {
            fits = mid;
        } else {
            too_many = mid;
        }
    }
    shortened(fits)
}

/// Splits `text` into a first line at most `max` pixels wide in `style` and the rest: at the
/// last space where the first line still fits, or between characters when its first word is
/// wider than a line.
fn break_line(text: &str, max: u32, style: &TextStyle) -> (String, String) {
    let fits = |s: &str| text_width(s, style) <= max;
    let at_space = text
        .char_indices()
        .filter(|&(i, c)| c == ' ' && !text[..i].trim().is_empty())
        .map(|(i, _)| i)
        .take_while(|&i| fits(text[..i].trim_end()))
        .last();
    let at = at_space.unwrap_or_else(|| {
        // At least one character, so that the rest is shorter than the text.
        text.char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .take_while(|&end| fits(&text[..end]))
            .last()
            .unwrap_or_else(|| text.chars().next().map_or(0, char::len_utf8))
    });
    (
        text[..at].trim_end().to_string(),
        text[at..].trim_start().to_string(),
    )
}

/// The size and lines of `title` in a figure `width` pixels wide: one line at the largest size
/// when it fits; else two lines, broken by [`break_line`], at the largest size at which both
/// fit; at the smallest size the second line is shortened with an ellipsis when it still does
/// not fit. No line is wider than the figure less [`TITLE_MARGIN`] on each side.
pub fn title_lines(title: &str, width: u32) -> (f64, Vec<String>) {
    let max = width.saturating_sub(2 * TITLE_MARGIN);
    if text_width(title, &title_at(TITLE_SIZES[0])) <= max {
        return (TITLE_SIZES[0], vec![title.to_string()]);
    }
    let mut last = (0.0, Vec::new());
    for size in TITLE_SIZES {
        let style = title_at(size);
        let (first, rest) = break_line(title, max, &style);
        if text_width(&rest, &style) <= max {
            return (size, vec![first, rest]);
        }
        last = (size, vec![first, fit(&rest, max, &style)]);
    }
    last
}

/// Draws `title` centred at the top of `root` as [`title_lines`] sets it, and returns the area
/// below it.
pub fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, PlotError>
where
    DB::ErrorType: 'static,
{
    let (width, _) = root.dim_in_pixel();
    let (size, lines) = title_lines(title, width);
    let style = title_at(size).pos(Pos::new(HPos::Center, VPos::Top));
    let mut y = TITLE_PADDING;
    for line in &lines {
        let (_, height) = root.estimate_text_size(line, &style).or_draw()?;
        root.draw_text(line, &style, (width as i32 / 2, y))
            .or_draw()?;
        y += height as i32;
    }
    Ok(root.split_vertically(y + TITLE_PADDING).1)
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

/// plotters' legend layout (`SeriesLabelStyle::draw`, 0.3.7): the room for each entry's
/// symbol, the padding inside the box and the gap between the box and the plotting area's edge.
const LEGEND_SYMBOL: i32 = 30;
const LEGEND_PADDING: i32 = 10;
const LEGEND_INSET: i32 = 5;

/// The size in pixels of the box of a legend of `entries`, as [`draw_legend`] draws it.
pub fn legend_size(entries: &[String]) -> (i32, i32) {
    let font = legend();
    let mut text = MultiLineText::<_, &str>::new((0, 0), &font);
    for e in entries {
        text.push_line(e.as_str());
    }
    let (w, h) = text.estimate_dimension().unwrap_or_else(|_| {
        // Without the font's metrics (`render` refuses to draw then), a character per em.
        let widest = entries.iter().map(|e| e.chars().count()).max().unwrap_or(0);
        let em = font.font.get_size();
        (
            (widest as f64 * em) as i32,
            (entries.len() as f64 * em * 1.25) as i32,
        )
    });
    (
        w + LEGEND_SYMBOL + 2 * LEGEND_PADDING,
        h + 2 * LEGEND_PADDING,
    )
}

/// Where a legend box of `size` pixels lies at `corner` of `area` (the chart's plotting
/// area), in the backend's pixels (left, top, right, bottom), as plotters places it.
pub fn legend_rect<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    corner: &SeriesLabelPosition,
    (w, h): (i32, i32),
) -> (i32, i32, i32, i32) {
    let (base_x, base_y) = area.get_base_pixel();
    let (area_w, area_h) = area.dim_in_pixel();
    let (area_w, area_h) = (area_w as i32, area_h as i32);
    let x = match corner {
        SeriesLabelPosition::UpperLeft
        | SeriesLabelPosition::MiddleLeft
        | SeriesLabelPosition::LowerLeft => LEGEND_INSET,
        SeriesLabelPosition::UpperMiddle
        | SeriesLabelPosition::MiddleMiddle
        | SeriesLabelPosition::LowerMiddle => (area_w - w) / 2,
        SeriesLabelPosition::UpperRight
        | SeriesLabelPosition::MiddleRight
        | SeriesLabelPosition::LowerRight => area_w - w - LEGEND_INSET,
        SeriesLabelPosition::Coordinate(x, _) => *x,
    };
    let y = match corner {
        SeriesLabelPosition::UpperLeft
        | SeriesLabelPosition::UpperMiddle
        | SeriesLabelPosition::UpperRight => LEGEND_INSET,
        SeriesLabelPosition::MiddleLeft
        | SeriesLabelPosition::MiddleMiddle
        | SeriesLabelPosition::MiddleRight => (area_h - h) / 2,
        SeriesLabelPosition::LowerLeft
        | SeriesLabelPosition::LowerMiddle
        | SeriesLabelPosition::LowerRight => area_h - h - LEGEND_INSET,
        SeriesLabelPosition::Coordinate(_, y) => *y,
    };
    (base_x + x, base_y + y, base_x + x + w, base_y + y + h)
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
        .legend_area_size(LEGEND_SYMBOL)
        .margin(LEGEND_PADDING)
        .position(position)
        .draw()
        .or_draw()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The title font's width of `text` at `size`.
    fn width_at(text: &str, size: f64) -> u32 {
        text_width(text, &title_at(size))
    }

    const LONG: &str = "hackbench runs: 1a2b3c4d kernel=6.18.0-rc4-next-20251120,host=node7,\
                        config=preempt-rt vs 5e6f7a8b kernel=6.18.0-rc4-next-20251121,host=node7,\
                        config=preempt-rt vs 9c0d1e2f kernel=6.17.9,host=node7,config=voluntary";

    #[test]
    fn a_title_is_measured_in_the_bold_it_is_drawn_in() {
        crate::register_font().unwrap();
        let title = "latency:cpus=all:dma_latency=on:duration=2:interval=200:policy=other:\
                     priority=99: latency per CPU";
        let regular = text_width(title, &(FONT, 26.0).into_font().into());
        let bold = text_width(title, &title_at(26.0));
        assert!(bold > regular * 21 / 20, "bold {bold}, regular {regular}");
        // Too wide in bold for a 1200-pixel figure: two lines.
        assert_eq!(title_lines(title, 1200).1.len(), 2);
    }

    #[test]
    fn a_title_that_fits_stays_one_line_at_full_size() {
        crate::register_font().unwrap();
        assert_eq!(
            title_lines("hackbench runs", 1200),
            (TITLE_SIZES[0], vec!["hackbench runs".to_string()])
        );
    }

    #[test]
    fn a_long_title_wraps_at_a_space_and_shrinks_until_both_lines_fit() {
        crate::register_font().unwrap();
        for width in [1200, 1000] {
            let (size, lines) = title_lines(LONG, width);
            assert_eq!(lines.len(), 2, "{width}: {lines:?}");
            for line in &lines {
                assert!(
                    width_at(line, size) <= width - 2 * TITLE_MARGIN,
                    "{width}: {line}"
                );
            }
            // Broken at a space, nothing lost.
            assert_eq!(lines.join(" "), LONG, "{width}");
        }
        // Narrower figures need smaller type.
        assert!(title_lines(LONG, 1000).0 < title_lines(LONG, 1200).0);
    }

    #[test]
    fn a_title_too_long_for_two_lines_ends_in_an_ellipsis() {
        crate::register_font().unwrap();
        let (size, lines) = title_lines(&LONG.repeat(3), 400);
        assert_eq!(size, TITLE_SIZES[TITLE_SIZES.len() - 1]);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'), "{lines:?}");
        for line in &lines {
            assert!(width_at(line, size) <= 400 - 2 * TITLE_MARGIN, "{line}");
        }
    }

    #[test]
    fn a_word_wider_than_a_line_breaks_between_characters() {
        crate::register_font().unwrap();
        let word = "x".repeat(200);
        let (first, rest) = break_line(&word, 300, &title_at(26.0));
        assert!(!first.is_empty() && width_at(&first, 26.0) <= 300);
        assert_eq!(format!("{first}{rest}"), word);
    }

    #[test]
    fn a_shortened_axis_caption_keeps_its_unit() {
        crate::register_font().unwrap();
        let key = "meminfo.SReclaimable_of_every_node_together";
        assert_eq!(
            axis_caption_with_unit(key, "kB", 2000),
            format!("{key} (kB)")
        );
        let short = axis_caption_with_unit(key, "kB", 150);
        assert!(short.ends_with("… (kB)"), "{short}");
        assert!(text_width(&short, &axis_label()) <= 150, "{short}");
        assert_eq!(axis_caption_with_unit(key, "", 150), axis_caption(key, 150));
    }

    #[test]
    fn the_y_label_area_grows_with_the_widest_tick_label() {
        crate::register_font().unwrap();
        let wide = y_label_area(-123_456.0, 123_456.0);
        assert!(wide >= text_width("-123456", &tick()) + 50, "{wide}");
        assert!(y_label_area(0.0, 1.0) < wide);
    }

    #[test]
    fn large_tick_values_take_a_prefix_and_the_decimals_their_step_needs() {
        assert_eq!(compact(2e10, 0.0, 1.2e11), "20G");
        assert_eq!(compact(0.0, 0.0, 1.2e11), "0G");
        assert_eq!(compact(5e5, 0.0, 5e6), "0.5M");
        assert_eq!(compact(1.5e6, 1e6, 3e6), "1.5M");
        assert_eq!(
            compact(123_456_000.0, 123_450_000.0, 123_470_000.0),
            "123.456M"
        );
        assert_eq!(compact(250.0, 0.0, 1000.0), "250");
        assert_eq!(compact(0.25, 0.0, 1.0), "0.25");
        assert_eq!(compact(-0.0001, -5.0, 5.0), "0");
    }

    #[test]
    fn fit_keeps_whole_characters_and_marks_the_cut() {
        crate::register_font().unwrap();
        let style = tick();
        assert_eq!(fit("groups=4", 500, &style), "groups=4");
        let cut = fit("ipc=socket:groups=16:loops=10000", 120, &style);
        assert!(
            cut.ends_with('…') && text_width(&cut, &style) <= 120,
            "{cut}"
        );
        assert!("ipc=socket:groups=16:loops=10000".starts_with(cut.trim_end_matches('…')));
        assert_eq!(fit("groups=4", 1, &style), "");
    }

    #[test]
    fn a_long_panel_caption_takes_two_lines_before_an_ellipsis() {
        let caption = "hackbench:datasize=100:fds=20:groups=4:ipc=pipe:loops=1000:mode=process \
                       [load cpu + io] kernel=6.18.0-rc4";
        let lines = panel_caption(caption, 500);
        assert_eq!(lines.len(), 2, "{lines:?}");
        // Nothing lost: the end that tells the panel apart is on the second line.
        assert_eq!(lines.concat().replace(' ', ""), caption.replace(' ', ""));
        assert!(lines
            .iter()
            .all(|l| text_width(l, &axis_label()) <= 500 - 24));
        // Too long for two lines: the second ends in an ellipsis.
        let longer = caption.repeat(3);
        let lines = panel_caption(&longer, 500);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'), "{lines:?}");
        // A short one stays one line.
        assert_eq!(panel_caption("kernel=A", 500), ["kernel=A"]);
    }
}
