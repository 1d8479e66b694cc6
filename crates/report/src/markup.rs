//! Text markup for mailing lists and issues: the tables, lists and emphasis that compare's and
//! history's reports are written in, behind one trait ([`Markup`], as hyperfine's
//! `MarkupFormatter`), so that a report is written once for any markup language that implements
//! it. [`Markdown`] is GitHub-flavoured Markdown.

/// How a table column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What a markup language writes a report with. Texts given to [`Markup::item`],
/// [`Markup::strong`] and [`Markup::code`] are written as given: escape with
/// [`Markup::escape`] whatever may hold the language's special characters; [`Markup::table`]
/// escapes every cell itself.
pub trait Markup {
    /// `text` with the characters that would end a table cell or start markup escaped.
    fn escape(&self, text: &str) -> String;
    /// One line of a table, of cells already escaped.
    fn row(&self, cells: &[String]) -> String;
    /// The line below a table's header, giving each column's alignment.
    fn divider(&self, columns: &[Align]) -> String;
    /// A line of a list.
    fn item(&self, text: &str) -> String;
    /// Strong emphasis (a table's title).
    fn strong(&self, text: &str) -> String;
    /// Code inline (a configuration's label).
    fn code(&self, text: &str) -> String;

    /// A table: `headers`, the divider of `columns` and `rows`, every cell escaped.
    fn table<R: AsRef<[String]>>(
        &self,
        headers: &[String],
        columns: &[Align],
        rows: &[R],
    ) -> String {
        let escaped =
            |cells: &[String]| -> Vec<String> { cells.iter().map(|c| self.escape(c)).collect() };
        let mut out = self.row(&escaped(headers));
        out.push_str(&self.divider(columns));
        for r in rows {
            out.push_str(&self.row(&escaped(r.as_ref())));
        }
        out
    }
}

/// GitHub-flavoured Markdown (GFM spec 0.29, section 4.10 "Tables (extension)").
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Markup for Markdown {
    fn escape(&self, text: &str) -> String {
        // A `|` ends a cell even inside code spans, unless escaped (GFM 4.10).
        text.replace('|', "\\|")
    }

    fn row(&self, cells: &[String]) -> String {
        format!("| {} |\n", cells.join(" | "))
    }

    fn divider(&self, columns: &[Align]) -> String {
        let marks: Vec<&str> = columns
            .iter()
            .map(|a| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        format!("|{}|\n", marks.join("|"))
    }

    fn item(&self, text: &str) -> String {
        format!("- {text}\n")
    }

    fn strong(&self, text: &str) -> String {
        format!("**{text}**")
    }

    fn code(&self, text: &str) -> String {
        format!("`{text}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_markdown_table_escapes_its_cells_and_aligns_its_columns() {
        let headers = ["name".to_string(), "value".to_string()];
        let rows = [["a|b".to_string(), "1".to_string()]];
        assert_eq!(
            Markdown.table(&headers, &[Align::Left, Align::Right], &rows),
            "| name | value |\n|---|---:|\n| a\\|b | 1 |\n"
        );
        assert_eq!(Markdown.item("x"), "- x\n");
        assert_eq!(Markdown.strong("t"), "**t**");
        assert_eq!(Markdown.code("c"), "`c`");
    }
}
