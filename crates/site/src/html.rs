//! The pieces every page is made of: the page frame with its navigation, tables, sections,
//! figures, figure switches and warning notes, as maud markup.
//!
//! Markup and text are different types: markup ([`Markup`]) is made only by maud's `html!`,
//! and any other value spliced into it (`(name)`, `title=(text)`) is text, which maud escapes
//! (`& < > "`; attribute values are always double-quoted). Nothing of the site makes markup
//! otherwise: maud's `PreEscaped` is disallowed by the workspace's clippy.toml. [`page`] then
//! escapes the control characters of stored text (`vernier_model::text`). The only markup that
//! is not made here is the SVG of the figures, separate files that `vernier_plot` draws with
//! its own escaping ([`crate::Site::render`]).

use maud::{html, Markup, Render, DOCTYPE};

/// The stylesheet every page links (`vernier.css`).
pub const CSS: &str = include_str!("vernier.css");

/// The script every page loads (`vernier.js`): the tag filter of the index and the switches
/// between figures. Pages read fully without it.
pub const JS: &str = include_str!("vernier.js");

/// The site's icon (`favicon.svg`), so that a browser asks for no `/favicon.ico`.
pub const FAVICON: &str = include_str!("favicon.svg");

/// The Content-Security-Policy of every page: only the site's own files, no inline script, no
/// other origin, so even markup that got through could not run or fetch anything.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'";

/// A whole page: `title`, the navigation (`(href, text)` relative to the root), `body`. `root`
/// is the way back to the site's root (`""` or `"../"`).
pub fn page(root: &str, title: &str, nav: &[(String, String)], body: &Markup) -> String {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CONTENT_SECURITY_POLICY);
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " - vernier" }
                link rel="icon" href={ (root) "favicon.svg" };
                link rel="stylesheet" href={ (root) "vernier.css" };
            }
            body {
                nav {
                    @for (href, text) in nav {
                        a href={ (root) (href) } { (text) }
                    }
                }
                main {
                    h1 { (title) }
                    (body)
                }
                script src={ (root) "vernier.js" } {}
            }
        }
    };
    let page = with_heading_ids(&page.0);
    vernier_model::text::printable_in_markup(&page).into_owned()
}

/// `markup` with an id on every `h2` and `h3` that has none, made of its text (`Runs of each
/// configuration` is `runs-of-each-configuration`; a second of the same text gets `-2`), so
/// that every heading can be linked. Only ASCII letters, digits and `-` go into an id, so it
/// needs no escaping; the headings maud made are found by their exact start tags.
fn with_heading_ids(markup: &str) -> String {
    let mut out = String::with_capacity(markup.len() + 256);
    let mut used: Vec<String> = Vec::new();
    let mut rest = markup;
    loop {
        let next = ["<h2>", "<h3>"]
            .iter()
            .filter_map(|t| rest.find(t).map(|i| (i, *t)))
            .min();
        let Some((at, tag)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        let inner = &rest[at + tag.len()..];
        let end = inner.find("</h").unwrap_or(inner.len());
        let base = slug(&inner[..end]);
        let mut id = base.clone();
        let mut n = 1;
        while used.contains(&id) || markup.contains(&format!(" id=\"{id}\"")) {
            n += 1;
            id = format!("{base}-{n}");
        }
        used.push(id.clone());
        out.push_str(&format!("<{} id=\"{id}\">", &tag[1..3]));
        rest = inner;
    }
}

/// The words of a heading's markup as an id: tags and character references left out, ASCII
/// letters and digits in lower case, anything else one `-`.
fn slug(markup: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    let mut in_ref = false;
    for c in markup.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            '&' if !in_tag => in_ref = true,
            ';' if in_ref => in_ref = false,
            _ if in_tag || in_ref => {}
            c if c.is_ascii_alphanumeric() => text.push(c.to_ascii_lowercase()),
            _ => {
                if !text.ends_with('-') {
                    text.push('-');
                }
            }
        }
    }
    let text = text.trim_matches('-').to_string();
    if text.is_empty() {
        "section".to_string()
    } else {
        text
    }
}

/// A table: `head` cells (text) and rows of cells, each text (escaped) or [`Markup`]. Numeric
/// columns (`numeric[i]`) are right-aligned. The table scrolls inside its own box when it is
/// wider than the page, never the page.
pub fn table(head: &[&str], rows: &[Vec<impl Render>], numeric: &[usize]) -> Markup {
    table_with(head, rows, |i| numeric.contains(&i).then_some("num"))
}

/// [`table`] of free text from the machine, such as an environment's fields, whose columns
/// after the first may hold a long value (a kernel command line, a hash) that breaks anywhere
/// and wraps over as many lines as it needs (`class="text long"`).
pub fn text_table(head: &[&str], rows: &[Vec<impl Render>]) -> Markup {
    table_with(head, rows, |i| (i > 0).then_some("text long"))
}

fn table_with(
    head: &[&str],
    rows: &[Vec<impl Render>],
    class: impl Fn(usize) -> Option<&'static str>,
) -> Markup {
    html! {
        div.scroll {
            table {
                thead {
                    tr {
                        // Headings wrap at their dots too (`stat.<wbr>system (s)`), so that a
                        // column of short numbers is not as wide as a monitor key.
                        @for (i, h) in head.iter().enumerate() {
                            th class=[class(i)] { (label(h)) }
                        }
                    }
                }
                tbody {
                    @for row in rows {
                        tr {
                            @for (i, cell) in row.iter().enumerate() {
                                td class=[class(i)] { (cell) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The id of a configuration's row on its benchmark's page (`c-pipe-mode-cross-cpu` for
/// `pipe:mode=cross-cpu`): ASCII letters and digits of its label kept, anything else a `-`, so
/// that a link from a ranked change leads to the row of its medians.
pub fn config_anchor(label: &str) -> String {
    let clean: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("c-{clean}")
}

/// A configuration label (`hackbench:groups=4:ipc=pipe`) or monitor key that may wrap after
/// each `:`, `,` and `.` rather than only at spaces, so that a long spec does not widen its
/// column to the whole option string. `<wbr>` is a line-break opportunity only; copied text
/// stays the same.
pub fn label(text: &str) -> Markup {
    const BREAKS: [char; 3] = [':', ',', '.'];
    html! {
        @for part in text.split_inclusive(BREAKS) {
            (part)
            @if part.ends_with(BREAKS) { wbr; }
        }
    }
}

/// A section: a heading of `level` (2 or 3) with `title`, an optional sentence `about` what it
/// shows, and `content`; nothing at all when `content` is empty, so that no page has a heading
/// with nothing under it.
pub fn section(
    level: u8,
    id: Option<&str>,
    title: &str,
    about: Option<Markup>,
    content: &Markup,
) -> Markup {
    if content.0.trim().is_empty() {
        return html! {};
    }
    html! {
        @if level == 2 { h2 id=[id] { (title) } } @else { h3 id=[id] { (title) } }
        @if let Some(about) = about { p.about { (about) } }
        (content)
    }
}

/// A figure file shown as an image, with its caption. `key`, when given, names it for a
/// switch ([`switch`]).
pub fn figure(src: &str, caption: &str, key: Option<&str>) -> Markup {
    html! {
        figure data-key=[key] {
            img src=(src) alt=(caption) loading="lazy";
            figcaption { (caption) }
        }
    }
}

/// The code under which a configuration's stored error is listed with its warnings.
const ERROR_CODE: &str = "error";

/// The validity warnings of one table, shown compactly: a cell lists the warnings' codes
/// (`few-runs`, `contaminated`), each a link to its full text in a list under the table
/// ([`WarningNotes::list`]), where each distinct text appears once.
pub struct WarningNotes {
    /// The prefix of the list items' ids, unique on the page.
    id: String,
    /// Each distinct warning: its code and its text.
    notes: Vec<(&'static str, String)>,
}

impl WarningNotes {
    /// The warnings of the table whose list items are `ID-1`, `ID-2`, ...
    pub fn new(id: &str) -> WarningNotes {
        WarningNotes {
            id: id.to_string(),
            notes: Vec::new(),
        }
    }

    /// The cell of a row with `warnings`: their distinct codes (a comparison's two sides may
    /// raise the same one), each linking to its first text and with every text of that code in
    /// the row as its tooltip; empty without warnings. Every text goes to the list.
    pub fn cell(&mut self, warnings: &vernier_analysis::Warnings) -> Markup {
        self.cell_with_error(None, warnings)
    }

    /// [`WarningNotes::cell`] of a configuration that stopped with `error` (the stored text
    /// that `show` prints as `error:`, such as the command's timeout): the error comes first,
    /// under the code `error`, so that the page says why a configuration failed and not only
    /// that it has few runs.
    pub fn cell_with_error(
        &mut self,
        error: Option<&str>,
        warnings: &vernier_analysis::Warnings,
    ) -> Markup {
        // (code, first note number, texts) in the order of the row's notes.
        let mut codes: Vec<(&'static str, usize, Vec<String>)> = Vec::new();
        let texts = error
            .map(|e| (ERROR_CODE, e.to_string()))
            .into_iter()
            .chain(warnings.iter().map(|w| (w.code(), w.to_string())));
        for (code, text) in texts {
            let n = match self
                .notes
                .iter()
                .position(|(c, t)| *c == code && *t == text)
            {
                Some(i) => i + 1,
                None => {
                    self.notes.push((code, text.clone()));
                    self.notes.len()
                }
            };
            match codes.iter_mut().find(|(c, _, _)| *c == code) {
                Some((_, _, texts)) => texts.push(text),
                None => codes.push((code, n, vec![text])),
            }
        }
        html! {
            @for (i, (code, n, texts)) in codes.iter().enumerate() {
                @if i > 0 { " " }
                a.warning href={ "#" (self.id) "-" (n) } title=(texts.join("; ")) { (code) }
            }
        }
    }

    /// The full texts with their codes, each once, in the order of their first appearance;
    /// nothing when no row had a warning.
    pub fn list(&self) -> Markup {
        html! {
            @if !self.notes.is_empty() {
                ul.warnings {
                    @for (i, (code, text)) in self.notes.iter().enumerate() {
                        li id={ (self.id) "-" (i + 1) } { code { (code) } " " (text) }
                    }
                }
            }
        }
    }
}

/// A number with about four significant digits, or `-`.
pub fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| vernier_report::format::sig(v, 4))
}

/// An interval `[low, high]`, or `-`.
pub fn interval(low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!(
            "[{}, {}]",
            vernier_report::format::sig(l, 4),
            vernier_report::format::sig(h, 4)
        ),
        _ => "-".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_wherever_it_is_spliced() {
        let hostile = "\"><img src=x onerror='a&b'>";
        let markup = html! { p title=(hostile) { (hostile) } };
        assert_eq!(
            markup.0,
            "<p title=\"&quot;&gt;&lt;img src=x onerror='a&amp;b'&gt;\">\
             &quot;&gt;&lt;img src=x onerror='a&amp;b'&gt;</p>"
        );
        let table = table(&["<h>"], &[vec![hostile.to_string()]], &[]).0;
        assert!(!table.contains("<img"), "{table}");
        assert!(table.contains("<th>&lt;h&gt;</th>"), "{table}");
    }

    #[test]
    fn a_page_escapes_the_control_characters_of_stored_text() {
        let page = page("", "A\u{1b}[2J", &[], &html! { p { "x\0y" } });
        assert!(
            page.contains("<title>A\\u{1b}[2J - vernier</title>"),
            "{page}"
        );
        assert!(page.contains("<p>x\\0y</p>"), "{page}");
        assert!(page.contains("content=\"default-src 'none'; img-src 'self'"));
    }

    #[test]
    fn labels_may_break_after_their_separators_only_and_stay_escaped() {
        assert_eq!(
            label("hackbench:groups=1,2:cmd=<b>").0,
            "hackbench:<wbr>groups=1,<wbr>2:<wbr>cmd=&lt;b&gt;"
        );
        assert_eq!(label("").0, "");
    }

    #[test]
    fn warning_cells_are_distinct_codes_and_each_text_is_listed_once() {
        use vernier_analysis::Warning;
        let few = |n| Warning::FewRuns {
            n,
            min_n: 8,
            level: 0.95,
        };
        let mut notes = WarningNotes::new("w");
        let a = notes
            .cell(&vernier_analysis::Warnings(vec![
                few(5),
                Warning::Unreachable,
            ]))
            .0;
        let b = notes
            .cell(&vernier_analysis::Warnings(vec![few(5), few(3)]))
            .0;
        assert!(a.starts_with("<a class=\"warning\" href=\"#w-1\" title=\"only 5 measured"));
        assert!(
            a.contains("</a> <a class=\"warning\" href=\"#w-2\"") && a.contains(">unreachable</a>"),
            "{a}"
        );
        // The code once, linking to its first text, both texts in its tooltip.
        assert_eq!(b.matches("<a ").count(), 1, "{b}");
        assert!(
            b.contains("href=\"#w-1\"") && b.contains("; only 3 measured"),
            "{b}"
        );
        let list = notes.list().0;
        assert_eq!(list.matches("<li ").count(), 3, "{list}");
        assert!(list.contains("<li id=\"w-3\"><code>few-runs</code> only 3 measured runs"));
        assert_eq!(notes.cell(&vernier_analysis::Warnings::default()).0, "");
        assert_eq!(WarningNotes::new("x").list().0, "");
    }

    #[test]
    fn every_heading_gets_an_id_of_its_words() {
        let page = page(
            "",
            "T",
            &[],
            &html! {
                h2 { "Runs & <b>" } h3 { "Runs & <b>" } h2 id="kept" { "Kept" } h3 { "kept" }
                h2 { "Ä" }
            },
        );
        assert!(
            page.contains("<h2 id=\"runs-b\">Runs &amp; &lt;b&gt;</h2>"),
            "{page}"
        );
        assert!(page.contains("<h3 id=\"runs-b-2\">"), "{page}");
        assert!(
            page.contains("<h2 id=\"kept\">Kept</h2><h3 id=\"kept-2\">"),
            "{page}"
        );
        assert!(page.contains("<h2 id=\"section\">"), "{page}");
    }

    #[test]
    fn a_section_without_content_has_no_heading() {
        let about = || Some(html! { "What it would show." });
        assert_eq!(section(2, None, "Empty", about(), &html! { " " }).0, "");
        assert_eq!(
            section(3, Some("m"), "A & B", None, &html! { p { "x" } }).0,
            "<h3 id=\"m\">A &amp; B</h3><p>x</p>"
        );
        assert_eq!(
            section(2, None, "T", about(), &html! { p { "x" } }).0,
            "<h2>T</h2><p class=\"about\">What it would show.</p><p>x</p>"
        );
    }
}
