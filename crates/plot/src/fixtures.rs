//! Figures' test data: series of configurations summarised by `vernier_analysis::summarize`
//! from stored runs, as `vernier plot` summarises them, and a check that a figure's texts stay
//! inside it.

use plotters::prelude::*;
use vernier_model::{OptionValue, Options, StoredConfiguration, StoredSession};

use crate::{style, Series, FONT};

/// A configuration of `benchmark` with `options` and ten runs' times about `centre`
/// (testkit's stored session's, renamed).
fn configuration(benchmark: &str, options: &[(&str, u64)], centre: f64) -> StoredConfiguration {
    let values: Vec<f64> = (0..10)
        .map(|i| centre + (f64::from(i) - 4.5) * 0.1)
        .collect();
    let mut config = vernier_testkit::stored_session(0, &values)
        .configurations
        .remove(0);
    config.record.benchmark = benchmark.into();
    config.record.options = Options(
        options
            .iter()
            .map(|&(k, v)| (k.to_string(), OptionValue::UInt(v)))
            .collect(),
    );
    config
}

/// A series named `name` of one configuration of `benchmark` per entry of `configs`: its
/// options and the centre of its ten runs' times.
pub fn series(name: &str, benchmark: &str, configs: &[(&[(&str, u64)], f64)]) -> Series {
    let summaries = configs
        .iter()
        .map(|&(options, centre)| {
            vernier_analysis::summarize(&configuration(benchmark, options, centre), 1)
        })
        .collect();
    Series {
        name: name.into(),
        summaries,
    }
}

/// A session of one configuration of `benchmark` per entry of `configs`, as for [`series`].
pub fn session(benchmark: &str, configs: &[(&[(&str, u64)], f64)]) -> StoredSession {
    let mut session = vernier_testkit::stored_session(0, &[1.0]);
    session.configurations = configs
        .iter()
        .enumerate()
        .map(|(i, &(options, centre))| {
            let mut config = configuration(benchmark, options, centre);
            config.record.position = i as u32;
            config
        })
        .collect();
    session
}

/// A text element of an SVG: where it is anchored and how, its size and weight, whether it is
/// rotated, and its text.
pub struct SvgText {
    pub x: f64,
    pub y: f64,
    pub anchor: String,
    pub size: f64,
    pub bold: bool,
    pub rotated: bool,
    pub text: String,
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[start..start + tag[start..].find('"')?].to_string())
}

/// The text elements of `svg` as plotters' SVG backend writes them.
pub fn svg_texts(svg: &[u8]) -> Vec<SvgText> {
    let svg = std::str::from_utf8(svg).expect("SVG is UTF-8");
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let tag = &t[..t.find('>')?];
            let body = &t[t.find('>')? + 1..];
            Some(SvgText {
                x: attribute(tag, "x")?.parse().ok()?,
                y: attribute(tag, "y")?.parse().ok()?,
                anchor: attribute(tag, "text-anchor")?,
                // plotters writes the font's size divided by 1.24 (its pixels per em).
                size: attribute(tag, "font-size")?.parse::<f64>().ok()? * 1.24,
                bold: attribute(tag, "font-weight").as_deref() == Some("bold"),
                rotated: attribute(tag, "transform").is_some(),
                text: body[..body.find("</text>")?]
                    .trim()
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&#39;", "'")
                    .replace("&amp;", "&"),
            })
        })
        .collect()
}

/// The left and right ends of `t` as the figure's font lays it out.
pub fn extent(t: &SvgText) -> (f64, f64) {
    let font = if t.bold {
        style::title_at(t.size)
    } else {
        (FONT, t.size).into_font().into()
    };
    let width = f64::from(style::text_width(&t.text, &font));
    match t.anchor.as_str() {
        "start" => (t.x, t.x + width),
        "end" => (t.x - width, t.x),
        _ => (t.x - width / 2.0, t.x + width / 2.0),
    }
}

/// Panics unless every horizontal text of `svg` lies within `width` pixels.
pub fn assert_texts_inside(svg: &[u8], width: u32) {
    crate::register_font().expect("the font");
    for t in svg_texts(svg).iter().filter(|t| !t.rotated) {
        let (left, right) = extent(t);
        assert!(
            left >= 0.0 && right <= f64::from(width),
            "'{}' spans {left:.0}..{right:.0} of {width} pixels",
            t.text
        );
    }
}

/// Panics unless every text of `svg` turned upright (an axis caption along a vertical axis)
/// lies within `height` pixels and no two of them at one side overlap: each stays beside its
/// own panel.
pub fn assert_upright_texts_apart(svg: &[u8], height: u32) {
    crate::register_font().expect("the font");
    let upright: Vec<(SvgText, f64, f64)> = svg_texts(svg)
        .into_iter()
        .filter(|t| t.rotated)
        .map(|t| {
            // Turned about its anchor: its width runs along the y axis.
            let (left, right) = extent(&t);
            let (top, bottom) = (t.y - (t.x - left), t.y + (right - t.x));
            (t, top, bottom)
        })
        .collect();
    for (i, (t, top, bottom)) in upright.iter().enumerate() {
        assert!(
            *top >= 0.0 && *bottom <= f64::from(height),
            "'{}' spans {top:.0}..{bottom:.0} of {height} pixels",
            t.text
        );
        for (u, other_top, other_bottom) in &upright[i + 1..] {
            let beside = (t.x - u.x).abs() < t.size;
            assert!(
                !beside || bottom <= other_top || other_bottom <= top,
                "'{}' and '{}' overlap",
                t.text,
                u.text
            );
        }
    }
}
