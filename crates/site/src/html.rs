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
    let mut out = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
    for (i, h) in head.iter().enumerate() {
        let class = if numeric.contains(&i) {
            " class=\"num\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if numeric.contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", esc(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
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
/// at a time; without the script every figure stays visible.
pub fn switch(group: &str, label: &str, keys: &[String]) -> String {
    let mut out = format!(
        "<p><label>{} <select class=\"switch\" data-group=\"{}\">",
        esc(label),
        esc(group)
    );
    for k in keys {
        let _ = write!(out, "<option value=\"{}\">{}</option>", esc(k), esc(k));
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
}
