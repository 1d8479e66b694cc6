//! Figures of vernier results for papers, mailing lists and the report site: box plots of the
//! runs, per-CPU latency histograms, lines against a swept option, forest plots of comparisons,
//! monitor time series and grouped bars. Each figure is a pure function from analysed data
//! (`vernier_analysis`'s summaries, latency summaries and comparisons: every median, interval
//! and verdict drawn here is the one `show` and `compare` print) to the bytes of an SVG or PNG
//! file; the caller writes them. The static site of `vernier report` can inline the same SVG.
//!
//! Drawing is plotters' (RESEARCH.md 2.5), with its `ab_glyph` text: the font is DejaVu Sans
//! from the `dejavu` crate, registered at run time, so PNG text needs no system font,
//! fontconfig or freetype on the machine, and SVG text is laid out with the same metrics (the
//! SVG names the font family `sans-serif`; a viewer draws it with its own sans-serif font).
//! Every string from the database reaches the SVG through plotters' SVG backend, which escapes
//! `<`, `>`, `&`, quotes, and [`render`] escapes the control characters that XML forbids
//! (`vernier_model::text::printable_in_markup`).

mod bars;
mod boxes;
mod calls;
#[cfg(test)]
mod fixtures;
mod flame;
mod forest;
mod history;
mod labels;
mod latency;
mod line;
mod maxima;
mod monitor;
mod slots;
mod style;
mod thin;

use std::borrow::Cow;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

pub use bars::bars;
pub use boxes::box_plot;
pub use calls::{call_panels, calls, calls_size, CallPanel};
pub use flame::{differential_flame_graph, flame_graph};
pub use forest::forest;
pub use history::{bisection, history};
pub use labels::ConfigOrder;
pub use latency::latency;
pub use line::{line, line_panels, swept_options};
pub use maxima::maxima;
pub use monitor::{monitor, monitor_grid, monitor_size, MonitorTrace};
pub use slots::slot_panels;

/// A figure's file format, from the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    /// The format of a file named `name` (`.svg` or `.png`, in any case).
    pub fn from_file_name(name: &str) -> Result<Format, PlotError> {
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "svg" => Ok(Format::Svg),
            "png" => Ok(Format::Png),
            _ => Err(PlotError::Extension(name.to_string())),
        }
    }
}

/// The figure's size in pixels (SVG user units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

/// The least width and height of a figure, in pixels: below them the axes' labels overlap.
pub const MIN_WIDTH: u32 = 200;
pub const MIN_HEIGHT: u32 = 150;
/// The largest width or height of a figure, in pixels: 13.6 inches at 1200 dpi, or 54 panels
/// of [`MIN_PANEL_HEIGHT`] one above the other.
pub const MAX_SIDE: u32 = 16_384;
/// The most pixels of a PNG figure (8192 x 4096): it is drawn in an RGB buffer of 3 bytes a
/// pixel, 96 MiB at this bound (100000 x 100000 would take 30 GB). An SVG has no such buffer.
pub const MAX_PNG_PIXELS: u64 = 8192 * 4096;

/// The least height of one panel of a figure whose panels stand one above the other (box,
/// bars, line, monitor): below it the y axis' tick labels, the panel's captions and its legend
/// overlap.
pub const MIN_PANEL_HEIGHT: u32 = 300;

/// Pixels above the panels for the title, as two lines at its largest size take them
/// (`style::titled`).
const TITLE_HEIGHT: u32 = 80;

impl Size {
    /// The least height of a figure of `panels` panels one above the other, each at least
    /// [`MIN_PANEL_HEIGHT`] high.
    pub fn least_height(panels: usize) -> u32 {
        let panels = u32::try_from(panels.max(1)).unwrap_or(u32::MAX);
        TITLE_HEIGHT.saturating_add(MIN_PANEL_HEIGHT.saturating_mul(panels))
    }

    /// Checks that a figure of this size can be drawn as `format`: each side in
    /// [`MIN_WIDTH`]/[`MIN_HEIGHT`]..=[`MAX_SIDE`], and a PNG of at most [`MAX_PNG_PIXELS`].
    pub fn check(self, format: Format) -> Result<(), PlotError> {
        let Size { width, height } = self;
        if width < MIN_WIDTH || height < MIN_HEIGHT {
            return Err(PlotError::TooSmall(width, height));
        }
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(PlotError::TooLarge(width, height));
        }
        if format == Format::Png && u64::from(width) * u64::from(height) > MAX_PNG_PIXELS {
            return Err(PlotError::TooManyPixels(width, height));
        }
        Ok(())
    }

    /// A figure `width` wide of `panels` panels: the default height, taller when the panels
    /// need it.
    pub fn for_panels(width: u32, panels: usize) -> Size {
        Size {
            width,
            height: Size::default().height.max(Size::least_height(panels)),
        }
    }
}

impl Default for Size {
    fn default() -> Self {
        Size {
            width: 1200,
            height: 700,
        }
    }
}

/// One series of a figure: a session, or the sessions a tag selector pools, with the summaries
/// of its configurations.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend entry: a session's short id or a selector such as `kernel=6.8`.
    pub name: String,
    pub summaries: Vec<vernier_analysis::ConfigSummary>,
}

impl Series {
    /// The legend entry of one session: its short id (the first 8 characters of its id) and
    /// its tags, `1a2b3c4d kernel=6.8,host=x` (an id or a commit hash in a tag short,
    /// `vernier_report::format::short_tag_value`).
    pub fn session_name(info: &vernier_model::SessionInfo) -> String {
        let short = vernier_model::ShortId(info.id).to_string();
        let tags: Vec<String> = info
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={}", vernier_report::format::short_tag_value(v)))
            .collect();
        if tags.is_empty() {
            short
        } else {
            format!("{short} {}", tags.join(","))
        }
    }
}

/// Why a figure could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    #[error("'{0}': the figure's file must end in .svg or .png")]
    Extension(String),
    #[error("figure size {0}x{1} is too small; at least {MIN_WIDTH}x{MIN_HEIGHT} pixels")]
    TooSmall(u32, u32),
    #[error("figure size {0}x{1} is too large; at most {MAX_SIDE} pixels wide and high")]
    TooLarge(u32, u32),
    #[error(
        "figure size {0}x{1} is too large for a PNG: at most {MAX_PNG_PIXELS} pixels (such as \
         8192x4096), drawn in a buffer of 3 bytes each; draw an SVG (-o NAME.svg), or a smaller \
         or shorter figure (--width, --height, fewer sessions or configurations)"
    )]
    TooManyPixels(u32, u32),
    #[error("nothing to plot: {0}")]
    Empty(String),
    #[error("cannot draw the figure: {0}")]
    Draw(String),
}

/// The family name figures use; [`register_font`] gives it DejaVu Sans.
pub(crate) const FONT: &str = "sans-serif";

/// Registers DejaVu Sans as `sans-serif` for plotters' text, once per process.
fn register_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Draw("the embedded font cannot be read".into()))
    }
}

/// A drawing error of any backend as a [`PlotError`].
pub(crate) trait OrDraw<T> {
    fn or_draw(self) -> Result<T, PlotError>;
}

impl<T, E: std::error::Error + Send + Sync> OrDraw<T> for Result<T, DrawingAreaErrorKind<E>> {
    fn or_draw(self) -> Result<T, PlotError> {
        self.map_err(|e| PlotError::Draw(e.to_string()))
    }
}

/// What draws a figure on any plotters backend (SVG or the RGB buffer of a PNG).
pub(crate) trait Draw {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static;
}

/// Renders `figure` as an SVG document or PNG file of `size`.
pub(crate) fn render(figure: &impl Draw, format: Format, size: Size) -> Result<Vec<u8>, PlotError> {
    size.check(format)?;
    register_font()?;
    let dims = (size.width, size.height);
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, dims).into_drawing_area();
                root.fill(&WHITE).or_draw()?;
                figure.draw(&root)?;
                root.present().or_draw()?;
            }
            // plotters escapes `& < > " '` in stored text, but passes a control character as
            // it is, and one would make the file not XML, so no viewer could draw it.
            let escaped = match vernier_model::text::printable_in_markup(&svg) {
                Cow::Owned(escaped) => Some(escaped),
                Cow::Borrowed(_) => None,
            };
            Ok(escaped.unwrap_or(svg).into_bytes())
        }
        Format::Png => {
            // Within MAX_PNG_PIXELS (checked above): at most 96 MiB.
            let mut rgb = vec![0u8; size.width as usize * size.height as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, dims).into_drawing_area();
                root.fill(&WHITE).or_draw()?;
                figure.draw(&root)?;
                root.present().or_draw()?;
            }
            encode_png(&rgb, size)
        }
    }
}

fn encode_png(rgb: &[u8], size: Size) -> Result<Vec<u8>, PlotError> {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, size.width, size.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| PlotError::Draw(format!("PNG: {e}")))?;
        writer
            .write_image_data(rgb)
            .map_err(|e| PlotError::Draw(format!("PNG: {e}")))?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    use fixtures::{assert_texts_inside, assert_upright_texts_apart, series, svg_texts};

    const SMALL: Size = Size {
        width: 640,
        height: 400,
    };

    #[test]
    fn sizes_are_bounded_with_the_bound_in_the_message() {
        let size = |width, height| Size { width, height };
        assert!(size(200, 150).check(Format::Png).is_ok());
        assert!(size(8192, 4096).check(Format::Png).is_ok());
        assert!(size(MAX_SIDE, MAX_SIDE).check(Format::Svg).is_ok());
        let e = size(100_000, 100_000).check(Format::Png).unwrap_err();
        assert_eq!(
            e.to_string(),
            "figure size 100000x100000 is too large; at most 16384 pixels wide and high"
        );
        let e = size(u32::MAX, 700).check(Format::Svg).unwrap_err();
        assert!(e.to_string().contains("at most 16384 pixels"), "{e}");
        let e = size(10_000, 10_000).check(Format::Png).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("figure size 10000x10000 is too large for a PNG: at most 33554432"),
            "{e}"
        );
        assert!(matches!(
            size(199, 700).check(Format::Svg),
            Err(PlotError::TooSmall(199, 700))
        ));
        // Drawing checks too: nothing is allocated for a figure beyond the bounds.
        let summary = maxima::intervals(2, 60_000_000_000);
        let drawn = maxima(
            &[("rt".into(), summary)],
            "t",
            Format::Png,
            size(u32::MAX, 700),
        );
        assert!(matches!(drawn, Err(PlotError::TooLarge(..))));
        assert_eq!(Size::least_height(usize::MAX), u32::MAX);
    }

    #[test]
    fn a_long_title_stays_inside_the_figure() {
        let summary = maxima::intervals(2, 60_000_000_000);
        let title = "interval maxima of cyclictest on node7: kernel=6.18.0-rc4-next-20251120 \
                     against kernel=6.17.9 over a week";
        let svg = maxima(&[("rt".into(), summary)], title, Format::Svg, SMALL).unwrap();
        let lines: Vec<String> = svg_texts(&svg)
            .into_iter()
            .filter(|t| t.bold)
            .map(|t| t.text)
            .collect();
        assert_eq!(lines.join(" "), title, "two lines, nothing lost");
        assert_eq!(lines.len(), 2);
        assert_texts_inside(&svg, SMALL.width);
    }

    #[test]
    fn control_characters_in_stored_text_reach_an_svg_as_escapes() {
        // A series name (a tag), a benchmark name and a title with characters that XML 1.0
        // does not allow at all, even as character references.
        let series = vec![series(
            "kernel=A\u{1}\u{0}<b>",
            "bench\u{1b}[2J",
            &[(&[("level", 1)], 1.0)],
        )];
        let svg = box_plot(&series, "runs\u{ffff}", Format::Svg, SMALL).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        let forbidden: Vec<char> = svg
            .chars()
            .filter(|&c| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{ffff}')
            .collect();
        assert!(forbidden.is_empty(), "{forbidden:?}");
        for escaped in [
            "kernel=A\\u{1}\\0&lt;b&gt;",
            "bench\\u{1b}[2J",
            "runs\\u{ffff}",
        ] {
            assert!(svg.contains(escaped), "{escaped} in {svg}");
        }
    }

    /// Configurations that share long options, hackbench's groups 1 to 32: their options and
    /// the centre of their times at `scale`.
    fn long_configs(scale: f64) -> Vec<(Vec<(&'static str, u64)>, f64)> {
        [1, 2, 4, 8, 16, 32]
            .iter()
            .map(|&g| {
                let options = vec![
                    ("groups", g),
                    ("loops", 1_000_000),
                    ("fds", 20),
                    ("messages_per_sender", 100_000 + g),
                ];
                (options, scale * g as f64)
            })
            .collect()
    }

    /// `configs` as the fixtures take them.
    fn borrowed<'a>(
        configs: &'a [(Vec<(&'static str, u64)>, f64)],
    ) -> Vec<(&'a [(&'a str, u64)], f64)> {
        configs.iter().map(|(o, c)| (o.as_slice(), *c)).collect()
    }

    /// Series of kernels with long tags, each of configurations that share long options.
    fn long_series() -> Vec<Series> {
        let tags = "host=node7.lab.example.org,config=preempt-rt-isolcpus-nohz-full";
        [
            ("6.18.0-rc4-next-20251120", 1.0),
            ("6.17.9-200.fc43.x86_64", 1.2),
        ]
        .iter()
        .map(|&(kernel, scale)| {
            let configs = long_configs(scale);
            series(
                &format!("kernel={kernel},{tags}"),
                "hackbench",
                &borrowed(&configs),
            )
        })
        .collect()
    }

    #[test]
    fn a_forest_says_what_its_rows_share_on_a_line_of_its_own() {
        let (base, new) = (long_configs(1.0), long_configs(1.2));
        let report = vernier_analysis::compare(
            &[fixtures::session("hackbench", &borrowed(&base))],
            &[fixtures::session("hackbench", &borrowed(&new))],
            &vernier_analysis::CompareSettings::default(),
        )
        .unwrap();
        let title = "kernel=6.18.0-rc4-next-20251120 vs kernel=6.17.9: ratio NEW/BASE";
        for width in [640, 700, 1200] {
            let size = Size { width, height: 440 };
            let svg = forest(&report, title, Format::Svg, size).unwrap();
            assert_texts_inside(&svg, width);
            let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
            // The axis' caption whole (on two lines when the plot is narrow), then what the
            // rows share on a line of its own.
            let caption = texts
                .iter()
                .position(|t| t.starts_with("ratio NEW/BASE with its"))
                .unwrap_or_else(|| panic!("{width}: {texts:?}"));
            let whole = "ratio NEW/BASE with its 95% interval (band: ±2% threshold)";
            let (caption, shared) = if texts[caption] == whole {
                (texts[caption].clone(), &texts[caption + 1])
            } else {
                (
                    format!("{} {}", texts[caption], texts[caption + 1]),
                    &texts[caption + 2],
                )
            };
            assert_eq!(caption, whole, "{width}");
            assert_eq!(
                shared, "each configuration: hackbench:fds=20:loops=1000000",
                "{width}"
            );
            // Rows are named by what tells them apart.
            assert!(
                texts.iter().any(|t| t.starts_with("groups=32")),
                "{texts:?}"
            );
            // Each row with its change; the legend under the axis' lines, below every row,
            // not over the data.
            assert!(texts.iter().any(|t| t.contains("+20.0% ")), "{texts:?}");
            let all = svg_texts(&svg);
            let y_of = |text: &str| all.iter().find(|t| t.text == text).map(|t| t.y);
            let legend = y_of("withheld").unwrap_or_else(|| panic!("{texts:?}"));
            assert!(
                all.iter()
                    .filter(|t| {
                        let legend = ["faster", "slower", "equivalent", "inconclusive", "withheld"];
                        !legend.contains(&t.text.as_str()) && !t.text.starts_with("kernel=")
                    })
                    .all(|t| t.y < legend),
                "{width}: {texts:?}"
            );
        }
    }

    #[test]
    fn figures_have_no_minor_grid_and_no_colour_lost_on_white() {
        let series = long_series();
        for (kind, svg) in [
            ("box", box_plot(&series, "t", Format::Svg, SMALL)),
            ("bars", bars(&series, "t", Format::Svg, SMALL)),
            ("line", line(&series, "groups", "t", Format::Svg, SMALL)),
        ] {
            let svg = String::from_utf8(svg.unwrap_or_else(|e| panic!("{kind}: {e}"))).unwrap();
            // plotters draws its minor grid lines at 10% of the major ones' opacity.
            assert!(!svg.contains("opacity=\"0.1\""), "{kind}: a minor grid");
        }
        // WCAG's relative luminance (sRGB), and the contrast of each series' colour with
        // white: at least 2:1, which the Okabe-Ito yellow (1.3:1) is not.
        let linear = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        for i in 0..16 {
            let c = style::colour(i);
            let l = 0.2126 * linear(c.0) + 0.7152 * linear(c.1) + 0.0722 * linear(c.2);
            let contrast = 1.05 / (l + 0.05);
            assert!(contrast >= 2.0, "colour {i} {c:?}: contrast {contrast:.2}");
        }
    }

    #[test]
    fn long_names_stay_inside_every_figure() {
        let series = long_series();
        let title = format!(
            "hackbench: {}",
            series
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(" vs ")
        );
        for (kind, svg) in [
            ("box", box_plot(&series, &title, Format::Svg, SMALL)),
            ("bars", bars(&series, &title, Format::Svg, SMALL)),
            ("line", line(&series, "groups", &title, Format::Svg, SMALL)),
        ] {
            let svg = svg.unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_texts_inside(&svg, SMALL.width);
            let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
            // Labels and legend entries that do not fit end in an ellipsis, whole otherwise.
            assert!(texts.iter().any(|t| t.ends_with('…')), "{kind}: {texts:?}");
        }
        // A long key of large values (bytes of a memory counter) in panels of a small figure.
        let traces: Vec<MonitorTrace> = series
            .iter()
            .map(|s| MonitorTrace {
                name: format!("{}: {}", s.name, s.summaries[0].label()),
                runs: vec![("run 1".into(), vec![(0.0, 1.0), (1.0, 123_456_789_012.0)])],
                unit: "bytes".into(),
                counter: true,
                lines_are: "runs",
            })
            .collect();
        let key = "meminfo.SReclaimable_of_every_node_together";
        let svg = monitor(&traces, key, &title, Format::Svg, SMALL).unwrap();
        assert_texts_inside(&svg, SMALL.width);
        assert_upright_texts_apart(&svg, SMALL.height);
        let upright: Vec<String> = svg_texts(&svg)
            .into_iter()
            .filter(|t| t.rotated)
            .map(|t| t.text)
            .collect();
        // The unit stays whole where the key is shortened.
        assert!(
            upright.iter().all(|t| t.ends_with("… (bytes)")),
            "{upright:?}"
        );
        let named: Vec<(String, vernier_analysis::LatencySummary)> = series
            .iter()
            .map(|s| (s.name.clone(), maxima::intervals(30, 60_000_000_000)))
            .collect();
        let svg = maxima(&named, &title, Format::Svg, SMALL).unwrap();
        assert_texts_inside(&svg, SMALL.width);
    }

    /// The tick labels of a figure's y axes (numbers right-aligned to the axis) and its rotated
    /// texts (the y captions).
    fn y_texts(svg: &[u8]) -> (Vec<fixtures::SvgText>, Vec<fixtures::SvgText>) {
        let texts = svg_texts(svg);
        let is_number = |t: &str| t.starts_with(|c: char| c.is_ascii_digit() || c == '-');
        let (rotated, flat): (Vec<_>, Vec<_>) = texts.into_iter().partition(|t| t.rotated);
        let ticks = flat
            .into_iter()
            .filter(|t| t.anchor == "end" && is_number(&t.text))
            .collect();
        (ticks, rotated)
    }

    #[test]
    fn large_y_ticks_are_compact_and_clear_of_the_caption() {
        register_font().unwrap();
        let configs: Vec<(&[(&str, u64)], f64)> = vec![
            (&[("groups", 1)], 2_500_000.0),
            (&[("groups", 2)], 2_600_000.0),
        ];
        let series = [series("k", "hackbench", &configs)];
        for (kind, svg) in [
            ("box", box_plot(&series, "t", Format::Svg, Size::default())),
            ("bars", bars(&series, "t", Format::Svg, Size::default())),
            (
                "line",
                line(&series, "groups", "t", Format::Svg, Size::default()),
            ),
        ] {
            let svg = svg.unwrap();
            let (ticks, captions) = y_texts(&svg);
            let y_ticks: Vec<&fixtures::SvgText> =
                ticks.iter().filter(|t| t.text.ends_with('M')).collect();
            assert!(y_ticks.len() >= 3, "{kind}: {:?}", texts_of(&ticks));
            assert!(
                ticks.iter().all(|t| !t.text.ends_with(".0")),
                "{kind}: {:?}",
                texts_of(&ticks)
            );
            let labels_left = y_ticks
                .iter()
                .map(|t| fixtures::extent(t).0)
                .fold(f64::INFINITY, f64::min);
            for c in &captions {
                // A rotated caption's line is its type's size wide at most, around its x.
                assert!(
                    c.x + c.size <= labels_left,
                    "{kind}: '{}' at {} reaches the tick labels from {labels_left}",
                    c.text,
                    c.x
                );
            }
        }
    }

    fn texts_of(texts: &[fixtures::SvgText]) -> Vec<&str> {
        texts.iter().map(|t| t.text.as_str()).collect()
    }

    #[test]
    fn an_option_of_whole_numbers_is_ticked_at_whole_numbers() {
        register_font().unwrap();
        let configs: Vec<(&[(&str, u64)], f64)> = vec![
            (&[("groups", 1)], 1.0),
            (&[("groups", 2)], 2.0),
            (&[("groups", 3)], 3.0),
        ];
        let series = [series("k", "hackbench", &configs)];
        let svg = line(&series, "groups", "t", Format::Svg, Size::default()).unwrap();
        // The x axis' ticks are centred under their points.
        let x_ticks: Vec<String> = svg_texts(&svg)
            .into_iter()
            .filter(|t| !t.rotated && t.anchor == "middle")
            .map(|t| t.text)
            .filter(|t| t.parse::<f64>().is_ok())
            .collect();
        assert_eq!(x_ticks, ["1", "2", "3"]);
    }

    #[test]
    fn the_format_comes_from_the_extension() {
        assert_eq!(Format::from_file_name("a.SVG"), Ok(Format::Svg));
        assert_eq!(Format::from_file_name("dir.x/a.png"), Ok(Format::Png));
        assert!(Format::from_file_name("a.pdf").is_err());
        assert!(Format::from_file_name("svg").is_err());
    }
}
