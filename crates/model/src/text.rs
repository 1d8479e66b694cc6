//! Stored text (tags, notes, specs, option values, environment values, monitor keys, imported
//! names) as it is shown to a person. It is stored as given, but a control character may reach
//! a terminal, a page or a figure only as an escape that a reader can see: raw, it would break
//! a line, carry an ANSI sequence that rewrites the screen, or make an SVG figure, which is XML,
//! fail to parse at all. The escape is Rust's (`\n`, `\u{1b}`), the same everywhere vernier
//! shows text.

use std::borrow::Cow;

/// `text` for a terminal: every control character (Unicode category Cc) as a Rust escape.
pub fn printable(text: &str) -> Cow<'_, str> {
    escape(text, char::is_control)
}

/// Text made of stored text for a terminal (tables, reports): its own line breaks stay, every
/// other control character is escaped as [`printable`] escapes it.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c.is_control() && c != '\n')
}

/// A finished HTML or SVG document with every character that a markup document may not hold
/// escaped: control characters other than tab, line feed and carriage return, and the
/// noncharacters U+FFFE and U+FFFF (XML 1.0, 2.2 "Characters": not a `Char`, so an SVG holding
/// one is not XML; HTML Living Standard, 13.2.3.5 "Preprocessing the input stream": each is a
/// parse error). The markup vernier writes is ASCII without such characters, so only stored
/// text changes; the escapes hold none of `& < > " '`, so escaped text stays text.
pub fn printable_in_markup(document: &str) -> Cow<'_, str> {
    escape(document, |c| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    })
}

/// `text` with each character that `escaped` selects as its Rust escape (`char::escape_debug`
/// gives `\n`, `\t`, `\0` and `\u{..}` for these), borrowed when there is none.
fn escape(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_for_a_terminal() {
        assert!(matches!(printable("kernel 6.18"), Cow::Borrowed(_)));
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(printable("tab\there"), "tab\\there");
        assert_eq!(printable("naïve ü"), "naïve ü");
        assert_eq!(printable_lines("a\u{1b}[2J\nb\n"), "a\\u{1b}[2J\nb\n");
    }

    #[test]
    fn markup_keeps_its_whitespace_and_escapes_what_xml_forbids() {
        assert_eq!(
            printable_in_markup("<p>a\tb\r\nc</p>\n"),
            "<p>a\tb\r\nc</p>\n"
        );
        assert_eq!(
            printable_in_markup("<text>\0\u{1}\u{1b}[2J\u{7f}\u{85}\u{ffff}\u{fffe}</text>"),
            "<text>\\0\\u{1}\\u{1b}[2J\\u{7f}\\u{85}\\u{ffff}\\u{fffe}</text>"
        );
        // Other noncharacters and private use are XML characters, left as they are.
        assert_eq!(printable_in_markup("\u{fdd0}\u{e000}"), "\u{fdd0}\u{e000}");
    }
}
