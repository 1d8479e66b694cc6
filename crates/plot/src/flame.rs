//! Flame graphs of profiled runs (Brendan Gregg's, drawn by inferno): the stacks of a
//! configuration's profiles as an interactive, searchable SVG as inferno writes it (its
//! script and styles inside, the generic sans-serif font), and the differential flame graph
//! of two such sets, NEW's stacks coloured by how their share changed against BASE (red:
//! grew, blue: shrank).

use inferno::flamegraph::{self, color::Palette, Options};
use vernier_model::FoldedStacks;

use crate::PlotError;

/// The flame graph of `stacks` (several profiled runs: merge them first), titled `title`;
/// `count_name` names the weights (`ns of cpu-clock`, `cycles`).
pub fn flame_graph(
    stacks: &FoldedStacks,
    title: &str,
    count_name: &str,
    width: Option<u32>,
) -> Result<Vec<u8>, PlotError> {
    if stacks.total() == 0 {
        return Err(PlotError::Empty("the profiles hold no samples".into()));
    }
    let folded = stacks.to_folded();
    let mut options = options(title, count_name, width);
    // Kernel frames (`_[k]`) orange, user frames red to yellow, as perf's own flame graphs.
    options.colors = Palette::Multi(flamegraph::color::MultiPalette::Java);
    render(&mut options, folded.lines())
}

/// The differential flame graph of NEW against BASE: NEW's stacks, each frame coloured by how
/// its share of the samples changed (red more, blue less). BASE is scaled to NEW's total
/// first (inferno's `normalize`), so that the colours show shares, not the number of samples.
pub fn differential_flame_graph(
    base: &FoldedStacks,
    new: &FoldedStacks,
    title: &str,
    count_name: &str,
    width: Option<u32>,
) -> Result<Vec<u8>, PlotError> {
    if base.total() == 0 || new.total() == 0 {
        return Err(PlotError::Empty(
            "both sides need profiles with samples".into(),
        ));
    }
    let mut diff = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options {
            normalize: true,
            strip_hex: false,
        },
        base.to_folded().as_bytes(),
        new.to_folded().as_bytes(),
        &mut diff,
    )
    .map_err(|e| PlotError::Draw(e.to_string()))?;
    let text = String::from_utf8_lossy(&diff);
    let mut options = options(title, count_name, width);
    options.subtitle = Some("NEW's stacks; red: a larger share than in BASE, blue: smaller".into());
    render(&mut options, text.lines())
}

fn options<'a>(title: &str, count_name: &str, width: Option<u32>) -> Options<'a> {
    let mut options = Options::default();
    options.title = vernier_model::text::printable(title).into_owned();
    options.count_name = count_name.to_string();
    options.image_width = width.map(|w| w as usize);
    // The same figure for the same stacks: no random colours.
    options.hash = true;
    options.deterministic = true;
    options
}

fn render<'a>(
    options: &mut Options<'_>,
    lines: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<u8>, PlotError> {
    let mut svg = Vec::new();
    flamegraph::from_lines(options, lines, &mut svg).map_err(|e| PlotError::Draw(e.to_string()))?;
    Ok(svg)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stacks(text: &str) -> FoldedStacks {
        FoldedStacks::from_folded(text).unwrap()
    }

    #[test]
    fn a_flame_graph_names_every_frame_and_escapes_markup() {
        let s = stacks("main;work;kmem_cache_alloc_[k] 30\nmain;<script> 10\n");
        let svg = String::from_utf8(flame_graph(&s, "hackbench", "ns", None).unwrap()).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..100]);
        // Kernel frames are coloured as such, their `_[k]` left out of the name shown.
        assert!(svg.contains("<title>kmem_cache_alloc ("), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
        assert!(!svg.contains("<script>;"));
        // Deterministic: the same figure twice.
        assert_eq!(
            flame_graph(&s, "hackbench", "ns", None).unwrap(),
            flame_graph(&s, "hackbench", "ns", None).unwrap()
        );
        assert!(flame_graph(&FoldedStacks::default(), "x", "ns", None).is_err());
    }

    #[test]
    fn a_differential_flame_graph_colours_growth_red_and_shrinking_blue() {
        let base = stacks("main;grows 20\nmain;shrinks 80\n");
        let new = stacks("main;grows 400\nmain;shrinks 600\n");
        let svg =
            String::from_utf8(differential_flame_graph(&base, &new, "diff", "ns", None).unwrap())
                .unwrap();
        // inferno's title text of a differential frame: its samples and the change.
        let frame = |name: &str| {
            let at = svg.find(&format!("<title>{name} (")).unwrap();
            svg[at..at + 200].to_string()
        };
        assert!(frame("grows").contains('+'), "{}", frame("grows"));
        assert!(frame("shrinks").contains('-'), "{}", frame("shrinks"));
    }
}
