//! HTML text: escaping, the page frame with its navigation, tables and figures. Every string
//! that comes from the database reaches a page through [`esc`]; markup is only ever written
//! here and in the page modules as literals.

use std::fmt::Write;

/// `text` as HTML text or a quoted attribute value: `& < > " '` as character references, so
/// that no stored tag, note, option value, environment string or monitor key can open or close
/// an element or an attribute (HTML Living Standard, 13.1.2.6 and 13.1.2.3).
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// The stylesheet every page links (`vernier.css`).
pub const CSS: &str = include_str!("vernier.css");

/// The script every page loads (`vernier.js`): the tag filter of the index and the switches
/// between figures. Pages read fully without it.
pub const JS: &str = include_str!("vernier.js");

/// The site's icon (`favicon.svg`), so that a browser asks for no `/favicon.ico`.
pub const FAVICON: &str = include_str!("favicon.svg");

/// A whole page: `title`, the navigation, `body`. `root` is the way back to the site's root
/// (`""` or `"../"`). The Content-Security-Policy allows only the site's own files: no inline
/// script, no other origin, so even markup that got through could not run or fetch anything.
pub fn page(root: &str, title: &str, nav: &[(String, String)], body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         img-src 'self'; style-src 'self'; script-src 'self'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} - vernier</title>\n<link rel=\"icon\" href=\"{root}favicon.svg\">\n\
         <link rel=\"stylesheet\" href=\"{root}vernier.css\">\n\
         </head>\n<body>\n<nav>",
        esc(title)
    );
    for (href, text) in nav {
        let _ = write!(out, "<a href=\"{root}{}\">{}</a>", esc(href), esc(text));
    }
    let _ = write!(
        out,
        "</nav>\n<main>\n<h1>{}</h1>\n{body}</main>\n<script src=\"{root}vernier.js\"></script>\n\
         </body>\n</html>\n",
        esc(title)
    );
    out
}

/// A table: `head` cells and rows of cells, all escaped. Numeric columns (`numeric[i]`) are
/// right-aligned.
pub fn table(head: &[&str], rows: &[Vec<String>], numeric: &[usize]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| esc(cell)).collect())
        .collect();
    table_of_markup(head, &rows, numeric)
}

/// [`table`] whose cells are markup already: each made by this module from escaped text
/// ([`label`], [`WarningNotes::cell`]) or by [`esc`]. The head is escaped here. The table scrolls
/// inside its own box when it is wider than the page, never the page.
pub fn table_of_markup(head: &[&str], rows: &[Vec<String>], numeric: &[usize]) -> String {
    table_with(head, rows, |i| {
        if numeric.contains(&i) {
            " class=\"num\""
        } else {
            ""
        }
    })
}

/// [`table`] of free text from the machine, such as an environment's fields, whose columns
/// after the first may hold a long value (a kernel command line, a hash) that breaks anywhere
/// and wraps over as many lines as it needs (`class="text long"`).
pub fn text_table(head: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| esc(cell)).collect())
        .collect();
    table_with(head, &rows, |i| {
        if i == 0 {
            ""
        } else {
            " class=\"text long\""
        }
    })
}

fn table_with(
    head: &[&str],
    rows: &[Vec<String>],
    class: impl Fn(usize) -> &'static str,
) -> String {
    let mut out = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
    for (i, h) in head.iter().enumerate() {
        // Headings wrap at their dots too (`stat.<wbr>system (s)`), so that a column of
        // short numbers is not as wide as a monitor key.
        let _ = write!(out, "<th{}>{}</th>", class(i), label(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{cell}</td>", class(i));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// A configuration label (`hackbench:groups=4:ipc=pipe`) or monitor key, escaped, that may
/// wrap after each `:`, `,` and `.` rather than only at spaces, so that a long spec does not
/// widen its column to the whole option string. `<wbr>` is a line-break opportunity only;
/// copied text stays the same.
pub fn label(text: &str) -> String {
    // The escaped text has no `:`, `,` or `.` of its own: the references are `&amp;` etc.
    let mut out = String::with_capacity(text.len() + 16);
    for c in esc(text).chars() {
        out.push(c);
        if matches!(c, ':' | ',' | '.') {
            out.push_str("<wbr>");
        }
    }
    out
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
    pub fn cell(&mut self, warnings: &vernier_analysis::Warnings) -> String {
        // (code, first note number, texts) in the order of the row's warnings.
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
    ) -> String {
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
        let links: Vec<String> = codes
            .iter()
            .map(|(code, n, texts)| {
                format!(
                    "<a class=\"warning\" href=\"#{}-{n}\" title=\"{}\">{}</a>",
                    esc(&self.id),
                    esc(&texts.join("; ")),
                    esc(code)
                )
            })
            .collect();
        links.join(" ")
    }

    /// The full texts with their codes, each once, in the order of their first appearance;
    /// nothing when no row had a warning.
    pub fn list(&self) -> String {
        if self.notes.is_empty() {
            return String::new();
        }
        let mut out = String::from("<ul class=\"warnings\">\n");
        for (i, (code, text)) in self.notes.iter().enumerate() {
            let _ = writeln!(
                out,
                "<li id=\"{}-{}\"><code>{}</code> {}</li>",
                esc(&self.id),
                i + 1,
                esc(code),
                esc(text)
            );
        }
        out.push_str("</ul>\n");
        out
    }
}

/// A section: a heading of `level` (2 or 3) with `title`, an optional sentence `about` what
/// it shows (markup: escaped text, `<code>`), and `content`; nothing at all when `content` is empty, so that no page has a
/// heading with nothing under it.
pub fn section(level: u8, id: Option<&str>, title: &str, about: &str, content: &str) -> String {
    if content.trim().is_empty() {
        return String::new();
    }
    let id = id
        .map(|i| format!(" id=\"{}\"", esc(i)))
        .unwrap_or_default();
    let mut out = format!("<h{level}{id}>{}</h{level}>\n", esc(title));
    if !about.is_empty() {
        let _ = writeln!(out, "<p class=\"about\">{about}</p>");
    }
    out.push_str(content);
    out
}

/// A figure file shown as an image, with its caption. `key`, when given, names it for a
/// switch ([`switch`]).
pub fn figure(src: &str, caption: &str, key: Option<&str>) -> String {
    let data = key
        .map(|k| format!(" data-key=\"{}\"", esc(k)))
        .unwrap_or_default();
    format!(
        "<figure{data}><img src=\"{}\" alt=\"{}\" loading=\"lazy\">\
         <figcaption>{}</figcaption></figure>\n",
        esc(src),
        esc(caption),
        esc(caption)
    )
}

/// [`figure`] when `drawn`, nothing otherwise (a figure with nothing to draw has no file).
pub fn figure_if(drawn: bool, src: &str, caption: &str, key: Option<&str>) -> String {
    if drawn {
        figure(src, caption, key)
    } else {
        String::new()
    }
}

/// A drop-down that shows one of the figures of the element `group` (by their `data-key`)
/// at a time, the `selected`-th first; without the script every figure stays visible.
pub fn switch(group: &str, label: &str, keys: &[String], selected: usize) -> String {
    let mut out = format!(
        "<p><label>{} <select class=\"switch\" data-group=\"{}\">",
        esc(label),
        esc(group)
    );
    for (i, k) in keys.iter().enumerate() {
        let _ = write!(
            out,
            "<option value=\"{}\"{}>{}</option>",
            esc(k),
            if i == selected { " selected" } else { "" },
            esc(k)
        );
    }
    out.push_str("</select></label></p>\n");
    out
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

/// A time in nanoseconds since the epoch as UTC, to the second.
pub fn utc(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns)
        .format("%Y-%m-%d %H:%M:%S UTC")
        .to_string()
}

/// A time in nanoseconds since the epoch as UTC, to the minute, for a column whose heading says
/// UTC.
pub fn utc_minute(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns)
        .format("%Y-%m-%d %H:%M")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_become_references() {
        assert_eq!(
            esc("\"><img src=x onerror='a&b'>"),
            "&quot;&gt;&lt;img src=x onerror=&#39;a&amp;b&#39;&gt;"
        );
        assert_eq!(esc("plain text"), "plain text");
    }

    #[test]
    fn labels_may_break_after_their_separators_only_and_stay_escaped() {
        assert_eq!(
            label("hackbench:groups=1,2:cmd=<b>"),
            "hackbench:<wbr>groups=1,<wbr>2:<wbr>cmd=&lt;b&gt;"
        );
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
        let a = notes.cell(&vernier_analysis::Warnings(vec![
            few(5),
            Warning::Unreachable,
        ]));
        let b = notes.cell(&vernier_analysis::Warnings(vec![few(5), few(3)]));
        assert!(a.starts_with("<a class=\"warning\" href=\"#w-1\" title=\"only 5 measured"));
        assert!(
            a.contains("href=\"#w-2\"") && a.contains(">unreachable</a>"),
            "{a}"
        );
        // The code once, linking to its first text, both texts in its tooltip.
        assert_eq!(b.matches("<a ").count(), 1, "{b}");
        assert!(
            b.contains("href=\"#w-1\"") && b.contains("; only 3 measured"),
            "{b}"
        );
        let list = notes.list();
        assert_eq!(list.matches("<li ").count(), 3, "{list}");
        assert!(list.contains("<li id=\"w-3\"><code>few-runs</code> only 3 measured runs"));
        assert_eq!(notes.cell(&vernier_analysis::Warnings::default()), "");
        assert_eq!(WarningNotes::new("x").list(), "");
    }

    #[test]
    fn a_section_without_content_has_no_heading() {
        assert_eq!(section(2, None, "Empty", "What it would show.", " \n"), "");
        assert_eq!(
            section(3, Some("m"), "A & B", "", "<p>x</p>\n"),
            "<h3 id=\"m\">A &amp; B</h3>\n<p>x</p>\n"
        );
    }
}
