//! What the queries of both engines are written against: one SQL text per statement, in the
//! dialect SQLite and PostgreSQL share, with numbered `$1, $2, ...` parameters (PostgreSQL's
//! form; the SQLite engine rewrites them to its `?1, ?2, ...`, see
//! [`crate::sqlite`]), values passed as [`Param`]s and rows read back as [`Row`]s of [`Cell`]s.
//!
//! Where the dialects differ the text comes from [`Dialect`], which is the only place that
//! knows both: today only reading a field of JSON text.

use crate::StoreError;

/// The SQL dialect of the connection a query runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

impl Dialect {
    /// The text value of the top-level field `key` of the JSON text in `column`
    /// (https://www.sqlite.org/json1.html#jex, and PostgreSQL's `->>` on `json`,
    /// https://www.postgresql.org/docs/15/functions-json.html). `key` is one of our own names.
    pub(crate) fn json_field(self, column: &str, key: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_extract({column}, '$.{key}')"),
            Dialect::Postgres => format!("({column}::json ->> '{key}')"),
        }
    }
}

/// A value bound to a numbered parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Param<'a> {
    Null,
    Int(i64),
    /// An unsigned count that must fit a signed 64-bit column; larger is an error at binding.
    Unsigned(u64),
    Real(f64),
    Bool(bool),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl Param<'_> {
    /// The value as a signed 64-bit integer, for [`Param::Unsigned`] an error when too large.
    pub(crate) fn unsigned_as_i64(value: u64) -> Result<i64, StoreError> {
        i64::try_from(value).map_err(|_| {
            StoreError::Invalid(format!("{value} exceeds the largest integer 2^63 - 1"))
        })
    }
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}

impl From<u32> for Param<'_> {
    fn from(v: u32) -> Self {
        Param::Int(i64::from(v))
    }
}

impl From<u64> for Param<'_> {
    fn from(v: u64) -> Self {
        Param::Unsigned(v)
    }
}

impl From<f64> for Param<'_> {
    fn from(v: f64) -> Self {
        Param::Real(v)
    }
}

impl From<bool> for Param<'_> {
    fn from(v: bool) -> Self {
        Param::Bool(v)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(v: &'a [u8]) -> Self {
        Param::Blob(v)
    }
}

impl<'a> From<&'a Vec<u8>> for Param<'a> {
    fn from(v: &'a Vec<u8>) -> Self {
        Param::Blob(v)
    }
}

/// A UUID as its 16 bytes (big-endian, RFC 9562): how run ids are stored (schema version 9).
impl<'a> From<&'a uuid::Uuid> for Param<'a> {
    fn from(v: &'a uuid::Uuid) -> Self {
        Param::Blob(v.as_bytes())
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Param::Null, Into::into)
    }
}

/// The parameters of a statement, each converted by [`Param::from`].
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        &[$($crate::sql::Param::from($value)),*][..]
    };
}
pub(crate) use args;

/// A column value as read, owned (the rows of [`Sql::query`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    /// PostgreSQL's booleans; SQLite has none (0 and 1).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Bool(bool),
    Text(String),
    Blob(Vec<u8>),
}

impl Cell {
    fn as_ref(&self) -> CellRef<'_> {
        match self {
            Cell::Null => CellRef::Null,
            Cell::Int(v) => CellRef::Int(*v),
            Cell::Real(v) => CellRef::Real(*v),
            Cell::Bool(v) => CellRef::Bool(*v),
            Cell::Text(v) => CellRef::Text(v),
            Cell::Blob(v) => CellRef::Blob(v),
        }
    }
}

/// A column value borrowed from the engine's row, as [`Sql::query_each`] hands it over: text
/// and bytes are not copied unless the reader keeps them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CellRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Bool(bool),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// A row as the engine holds it: its cells, each read in place.
pub(crate) trait RowSource {
    /// Column `i`; out of range (or text that is not UTF-8) is [`StoreError::Corrupt`].
    fn cell(&self, i: usize) -> Result<CellRef<'_>, StoreError>;
}

/// Typed access to the columns of a row, owned ([`Row`]) or borrowed ([`Cells`]).
pub(crate) trait Columns {
    fn cell_ref(&self, i: usize) -> Result<CellRef<'_>, StoreError>;

    /// Column `i` as a `T`; a column of another type or out of range is
    /// [`StoreError::Corrupt`].
    fn get<T: FromCell>(&self, i: usize) -> Result<T, StoreError> {
        let cell = self.cell_ref(i)?;
        T::from_cell(cell).ok_or_else(|| {
            StoreError::Corrupt(format!("column {i} holds {cell:?}, not {}", T::WHAT))
        })
    }

    /// Column `i` as bytes without a copy.
    fn blob(&self, i: usize) -> Result<&[u8], StoreError> {
        match self.cell_ref(i)? {
            CellRef::Blob(b) => Ok(b),
            other => Err(StoreError::Corrupt(format!(
                "column {i} holds {other:?}, not bytes"
            ))),
        }
    }

    /// Column `i` as text without a copy, `None` for null.
    fn optional_text(&self, i: usize) -> Result<Option<&str>, StoreError> {
        match self.cell_ref(i)? {
            CellRef::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    /// Column `i` as text without a copy.
    fn text(&self, i: usize) -> Result<&str, StoreError> {
        match self.cell_ref(i)? {
            CellRef::Text(t) => Ok(t),
            other => Err(StoreError::Corrupt(format!(
                "column {i} holds {other:?}, not text"
            ))),
        }
    }
}

/// A row as read: its cells in the order of the query's columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row(pub(crate) Vec<Cell>);

impl Row {
    /// [`Columns::get`], without the trait in scope.
    pub(crate) fn get<T: FromCell>(&self, i: usize) -> Result<T, StoreError> {
        Columns::get(self, i)
    }

    /// [`Columns::blob`], without the trait in scope.
    pub(crate) fn blob(&self, i: usize) -> Result<&[u8], StoreError> {
        Columns::blob(self, i)
    }
}

impl Columns for Row {
    fn cell_ref(&self, i: usize) -> Result<CellRef<'_>, StoreError> {
        self.0
            .get(i)
            .map(Cell::as_ref)
            .ok_or_else(|| StoreError::Corrupt(format!("row has no column {i}")))
    }
}

/// A row of [`Sql::query_each`], read where the engine holds it.
pub(crate) struct Cells<'a>(pub(crate) &'a dyn RowSource);

impl Columns for Cells<'_> {
    fn cell_ref(&self, i: usize) -> Result<CellRef<'_>, StoreError> {
        self.0.cell(i)
    }
}

/// A Rust value a cell converts to.
pub(crate) trait FromCell: Sized {
    const WHAT: &'static str;
    fn from_cell(cell: CellRef<'_>) -> Option<Self>;
}

impl FromCell for i64 {
    const WHAT: &'static str = "an integer";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Int(v) => Some(v),
            _ => None,
        }
    }
}

impl FromCell for u32 {
    const WHAT: &'static str = "an integer from 0 to 2^32 - 1";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        i64::from_cell(cell).and_then(|v| u32::try_from(v).ok())
    }
}

impl FromCell for u64 {
    const WHAT: &'static str = "a non-negative integer";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        i64::from_cell(cell).and_then(|v| u64::try_from(v).ok())
    }
}

impl FromCell for f64 {
    const WHAT: &'static str = "a number";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Real(v) => Some(v),
            // SQLite may hand back an integral REAL as an integer.
            CellRef::Int(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl FromCell for bool {
    const WHAT: &'static str = "a boolean";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Bool(v) => Some(v),
            // SQLite has no boolean type: 0 and 1 (the columns' CHECKs allow no other).
            CellRef::Int(0) => Some(false),
            CellRef::Int(1) => Some(true),
            _ => None,
        }
    }
}

impl FromCell for String {
    const WHAT: &'static str = "text";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Text(v) => Some(v.to_string()),
            _ => None,
        }
    }
}

impl FromCell for Vec<u8> {
    const WHAT: &'static str = "bytes";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Blob(v) => Some(v.to_vec()),
            _ => None,
        }
    }
}

impl FromCell for uuid::Uuid {
    const WHAT: &'static str = "a UUID of 16 bytes";
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Blob(v) => uuid::Uuid::from_slice(v).ok(),
            _ => None,
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    const WHAT: &'static str = T::WHAT;
    fn from_cell(cell: CellRef<'_>) -> Option<Self> {
        match cell {
            CellRef::Null => Some(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

/// Checks that `params` holds whole rows of `columns` ([`Sql::insert_rows`]).
pub(crate) fn check_rows(
    table: &str,
    columns: &[&str],
    params: &[Param<'_>],
) -> Result<(), StoreError> {
    if columns.is_empty() || !params.len().is_multiple_of(columns.len()) {
        return Err(StoreError::Invalid(format!(
            "{} values for rows of {} columns of {table}",
            params.len(),
            columns.len()
        )));
    }
    Ok(())
}

/// A connection inside a transaction, as the queries of both engines see it.
pub(crate) trait Sql {
    fn dialect(&self) -> Dialect;
    /// Runs a statement that returns no rows; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<usize, StoreError>;
    /// Runs a query; every row it returns.
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, StoreError>;
    /// Runs a query and hands each row to `each` as the engine reads it, without copying its
    /// cells: what reads of many rows use.
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&Cells<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;

    /// Inserts rows into `columns` of `table` (our own names, never input): `params` holds
    /// them one after the other, `columns.len()` values each, in the columns' order. It is
    /// how a copy stores a session's many runs, so each engine takes the fastest way it has:
    /// SQLite one prepared one-row statement executed for each row (a statement of many rows
    /// keeps a statement journal to undo part of itself: https://www.sqlite.org/tempfiles.html
    /// #statement_journal_files), PostgreSQL a binary COPY
    /// (https://www.postgresql.org/docs/15/sql-copy.html), one round trip for all the rows,
    /// which writes the values given for an identity column as they are.
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        params: &[Param<'_>],
    ) -> Result<(), StoreError>;

    /// The first row of a query, if any.
    fn query_opt(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row a query must return (a count, an aggregate).
    fn query_one(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Row, StoreError> {
        self.query_opt(sql, params)?
            .ok_or_else(|| StoreError::Corrupt(format!("no row for: {sql}")))
    }
}
