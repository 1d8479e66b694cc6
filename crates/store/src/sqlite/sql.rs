//! [`Sql`] on an SQLite connection: the shared statements' `$N` parameters become SQLite's
//! `?N` (https://www.sqlite.org/lang_expr.html#parameters), and values bind and read back as
//! SQLite's storage classes.

use std::borrow::Cow;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::Connection;

use crate::sql::{Cell, CellRef, Cells, Dialect, Param, Row, RowSource, Sql};
use crate::StoreError;

/// A connection inside a transaction that the caller began.
pub(crate) struct SqliteSql<'a>(pub(crate) &'a Connection);

/// `sql` with each parameter `$N` written `?N`. SQLite reads `$1` as a *named* parameter,
/// numbered by first appearance, which breaks a statement that uses `$2` before `$1`; `?N`
/// is numbered by `N` as PostgreSQL's `$N` is. A `$` inside a string literal or a quoted
/// name is left alone.
pub(crate) fn sqlite_parameters(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') if chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('?');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    Cow::Owned(out)
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Null => ToSqlOutput::Owned(Value::Null),
            Param::Int(v) => ToSqlOutput::Owned(Value::Integer(v)),
            Param::Unsigned(v) => ToSqlOutput::Owned(Value::Integer(
                Param::unsigned_as_i64(v)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?,
            )),
            Param::Real(v) => ToSqlOutput::Owned(Value::Real(v)),
            Param::Bool(v) => ToSqlOutput::Owned(Value::Integer(i64::from(v))),
            Param::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Param::Blob(v) => ToSqlOutput::Borrowed(ValueRef::Blob(v)),
        })
    }
}

fn cell(value: ValueRef<'_>) -> Result<Cell, StoreError> {
    Ok(match value {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(v) => Cell::Int(v),
        ValueRef::Real(v) => Cell::Real(v),
        ValueRef::Text(t) => Cell::Text(
            std::str::from_utf8(t)
                .map_err(|e| StoreError::Corrupt(format!("text that is not UTF-8: {e}")))?
                .to_string(),
        ),
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    })
}

/// A row of SQLite, read in place.
struct SqliteRow<'a, 'b>(&'a rusqlite::Row<'b>);

impl RowSource for SqliteRow<'_, '_> {
    fn cell(&self, i: usize) -> Result<CellRef<'_>, StoreError> {
        Ok(match self.0.get_ref(i)? {
            ValueRef::Null => CellRef::Null,
            ValueRef::Integer(v) => CellRef::Int(v),
            ValueRef::Real(v) => CellRef::Real(v),
            ValueRef::Text(t) => CellRef::Text(
                std::str::from_utf8(t)
                    .map_err(|e| StoreError::Corrupt(format!("text that is not UTF-8: {e}")))?,
            ),
            ValueRef::Blob(b) => CellRef::Blob(b),
        })
    }
}

impl Sql for SqliteSql<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<usize, StoreError> {
        // Cached: an import inserts a million runs with the same few statements.
        let mut stmt = self.0.prepare_cached(&sqlite_parameters(sql))?;
        Ok(stmt.execute(rusqlite::params_from_iter(params))?)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, StoreError> {
        let mut stmt = self.0.prepare_cached(&sqlite_parameters(sql))?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let cells = (0..columns)
                .map(|i| cell(r.get_ref(i)?))
                .collect::<Result<Vec<_>, StoreError>>()?;
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&Cells<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self.0.prepare_cached(&sqlite_parameters(sql))?;
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        while let Some(r) = rows.next()? {
            each(&Cells(&SqliteRow(r)))?;
        }
        Ok(())
    }

    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        params: &[Param<'_>],
    ) -> Result<(), StoreError> {
        crate::sql::check_rows(table, columns, params)?;
        let slots: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let mut stmt = self.0.prepare_cached(&format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            columns.join(", "),
            slots.join(", ")
        ))?;
        for row in params.chunks(columns.len()) {
            stmt.execute(rusqlite::params_from_iter(row))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_renumbered_outside_quotes() {
        assert_eq!(
            sqlite_parameters("UPDATE t SET a = $2 WHERE id = $1 AND b = '$1' AND \"$3\" = $10"),
            "UPDATE t SET a = ?2 WHERE id = ?1 AND b = '$1' AND \"$3\" = ?10"
        );
        assert_eq!(
            sqlite_parameters("SELECT json_extract(e, '$.k') FROM s WHERE id = $1"),
            "SELECT json_extract(e, '$.k') FROM s WHERE id = ?1"
        );
        assert!(matches!(sqlite_parameters("SELECT 1"), Cow::Borrowed(_)));
    }
}
