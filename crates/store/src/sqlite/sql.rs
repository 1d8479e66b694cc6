//! [`Sql`] on an SQLite connection: the shared statements' `$N` parameters become SQLite's
//! `?N` (https://www.sqlite.org/lang_expr.html#parameters), and values bind and read back as
//! SQLite's storage classes.

use std::borrow::Cow;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::Connection;

use crate::sql::{insert_text, Cell, CellRef, Cells, Dialect, Param, Row, RowSource, Sql};
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

/// A row's id (its first parameter) as SQLite's index orders it: bytes and text by their bytes.
fn id_bytes<'a>(row: &[Param<'a>]) -> Option<&'a [u8]> {
    match row.first() {
        Some(Param::Blob(b)) => Some(b),
        Some(Param::Text(t)) => Some(t.as_bytes()),
        _ => None,
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

    /// One prepared statement of one row, run for every row: no statement text to build or
    /// parse for each part of an import, and no statement journal, which SQLite writes for a
    /// statement of several rows inside a transaction (so that a failing row undoes the
    /// statement's others, https://www.sqlite.org/tempfiles.html#stmtjrnl).
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &str,
        per_row: usize,
        params: &[Param<'_>],
    ) -> Result<(), StoreError> {
        let mut stmt = self
            .0
            .prepare_cached(&sqlite_parameters(&insert_text(table, columns, per_row, 1)))?;
        for row in params.chunks(per_row.max(1)) {
            stmt.execute(rusqlite::params_from_iter(row))?;
        }
        Ok(())
    }

    /// [`Sql::insert_rows`], each row's key its rowid (the tables' `key INTEGER PRIMARY KEY`
    /// is the rowid, https://www.sqlite.org/lang_createtable.html#rowid): the keys that SQLite
    /// would give the rows in their order (the largest key + 1, + 2, ...), given explicitly,
    /// while the rows go in in the order of their first column. That column is an id of
    /// random bytes with a unique index: in order, each insertion into the index lands next to
    /// the previous one's pages instead of anywhere in it.
    fn insert_keyed(
        &mut self,
        table: &str,
        columns: &str,
        per_row: usize,
        params: &[Param<'_>],
    ) -> Result<Vec<i64>, StoreError> {
        let per_row = per_row.max(1);
        let rows: Vec<&[Param<'_>]> = params.chunks(per_row).collect();
        let last: i64 = self.0.query_row(
            &format!("SELECT coalesce(max(key), 0) FROM {table}"),
            [],
            |r| r.get(0),
        )?;
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_unstable_by_key(|&at| id_bytes(rows[at]));
        let mut stmt = self.0.prepare_cached(&sqlite_parameters(&insert_text(
            table,
            &format!("key, {columns}"),
            per_row + 1,
            1,
        )))?;
        for at in order {
            let key = last + 1 + at as i64;
            stmt.execute(rusqlite::params_from_iter(
                std::iter::once(Param::Int(key)).chain(rows[at].iter().copied()),
            ))?;
        }
        Ok((0..rows.len() as i64).map(|at| last + 1 + at).collect())
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
