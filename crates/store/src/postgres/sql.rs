//! [`Sql`] on a PostgreSQL connection: the shared statements as they are (PostgreSQL's `$N`
//! parameters), each prepared once per connection, values bound by the types the server
//! inferred for the parameters, and errors that say when the connection itself broke.

use std::collections::HashMap;

use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use postgres::{Client, Statement};

use crate::sql::{Cell, CellRef, Cells, Dialect, Param, Row, RowSource, Sql};
use crate::StoreError;

/// A connection inside a transaction that the caller began.
pub(crate) struct PgSql<'a> {
    pub(crate) client: &'a mut Client,
    /// Statements prepared on this connection, by text.
    pub(crate) statements: &'a mut HashMap<String, Statement>,
    /// The database as messages name it.
    pub(crate) location: &'a str,
}

impl PgSql<'_> {
    fn prepare(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .prepare(sql)
            .map_err(|e| error(self.location, e))?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// `params` as values of the types the server gave the statement's parameters.
    fn bind(statement: &Statement, params: &[Param<'_>]) -> Result<Vec<Bound>, StoreError> {
        if statement.params().len() != params.len() {
            return Err(StoreError::Invalid(format!(
                "a statement of {} parameters given {} values",
                statement.params().len(),
                params.len()
            )));
        }
        statement
            .params()
            .iter()
            .zip(params)
            .map(|(ty, p)| bind(ty, *p))
            .collect()
    }
}

/// A parameter's value in the Rust type that the postgres crate encodes as the parameter's type.
enum Bound {
    Int8(Option<i64>),
    Int4(Option<i32>),
    Float8(Option<f64>),
    Bool(Option<bool>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
}

impl Bound {
    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Bound::Int8(v) => v,
            Bound::Int4(v) => v,
            Bound::Float8(v) => v,
            Bound::Bool(v) => v,
            Bound::Text(v) => v,
            Bound::Bytes(v) => v,
        }
    }
}

fn bind(ty: &Type, param: Param<'_>) -> Result<Bound, StoreError> {
    let wrong = || {
        StoreError::Invalid(format!(
            "cannot store {param:?} in a PostgreSQL column of type {ty}"
        ))
    };
    let int = |p: Param<'_>| -> Result<Option<i64>, StoreError> {
        match p {
            Param::Null => Ok(None),
            Param::Int(v) => Ok(Some(v)),
            Param::Unsigned(v) => Param::unsigned_as_i64(v).map(Some),
            _ => Err(wrong()),
        }
    };
    Ok(match *ty {
        Type::INT8 => Bound::Int8(int(param)?),
        Type::INT4 => Bound::Int4(
            int(param)?
                .map(i32::try_from)
                .transpose()
                .map_err(|_| wrong())?,
        ),
        Type::FLOAT8 => Bound::Float8(match param {
            Param::Null => None,
            Param::Real(v) => Some(v),
            _ => return Err(wrong()),
        }),
        Type::BOOL => Bound::Bool(match param {
            Param::Null => None,
            Param::Bool(v) => Some(v),
            _ => return Err(wrong()),
        }),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
            Bound::Text(match param {
                Param::Null => None,
                Param::Text(v) => Some(v.to_string()),
                _ => return Err(wrong()),
            })
        }
        Type::BYTEA => Bound::Bytes(match param {
            Param::Null => None,
            Param::Blob(v) => Some(v.to_vec()),
            _ => return Err(wrong()),
        }),
        _ => return Err(wrong()),
    })
}

fn cells(row: &postgres::Row) -> Result<Row, StoreError> {
    let unexpected = |ty: &Type| StoreError::Corrupt(format!("a column of type {ty}"));
    let mut cells = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let ty = column.type_();
        let get_error = |e: postgres::Error| StoreError::Corrupt(format!("column {i}: {e}"));
        let cell = match *ty {
            Type::INT8 => row
                .try_get::<_, Option<i64>>(i)
                .map_err(get_error)?
                .map(Cell::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)
                .map_err(get_error)?
                .map(|v| Cell::Int(v.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)
                .map_err(get_error)?
                .map(|v| Cell::Int(v.into())),
            Type::FLOAT8 => row
                .try_get::<_, Option<f64>>(i)
                .map_err(get_error)?
                .map(Cell::Real),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)
                .map_err(get_error)?
                .map(Cell::Bool),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => row
                .try_get::<_, Option<String>>(i)
                .map_err(get_error)?
                .map(Cell::Text),
            Type::BYTEA => row
                .try_get::<_, Option<Vec<u8>>>(i)
                .map_err(get_error)?
                .map(Cell::Blob),
            _ => return Err(unexpected(ty)),
        };
        cells.push(cell.unwrap_or(Cell::Null));
    }
    Ok(Row(cells))
}

/// A row of PostgreSQL, read in place.
struct PgRow<'a>(&'a postgres::Row);

impl RowSource for PgRow<'_> {
    fn cell(&self, i: usize) -> Result<CellRef<'_>, StoreError> {
        let row = self.0;
        let column = row
            .columns()
            .get(i)
            .ok_or_else(|| StoreError::Corrupt(format!("row has no column {i}")))?;
        let get_error = |e: postgres::Error| StoreError::Corrupt(format!("column {i}: {e}"));
        let cell = match *column.type_() {
            Type::INT8 => row
                .try_get::<_, Option<i64>>(i)
                .map_err(get_error)?
                .map(CellRef::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)
                .map_err(get_error)?
                .map(|v| CellRef::Int(v.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)
                .map_err(get_error)?
                .map(|v| CellRef::Int(v.into())),
            Type::FLOAT8 => row
                .try_get::<_, Option<f64>>(i)
                .map_err(get_error)?
                .map(CellRef::Real),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)
                .map_err(get_error)?
                .map(CellRef::Bool),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => row
                .try_get::<_, Option<&str>>(i)
                .map_err(get_error)?
                .map(CellRef::Text),
            Type::BYTEA => row
                .try_get::<_, Option<&[u8]>>(i)
                .map_err(get_error)?
                .map(CellRef::Blob),
            ref ty => return Err(StoreError::Corrupt(format!("a column of type {ty}"))),
        };
        Ok(cell.unwrap_or(CellRef::Null))
    }
}

impl Sql for PgSql<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<usize, StoreError> {
        let statement = self.prepare(sql)?;
        let bound = Self::bind(&statement, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(Bound::as_sql).collect();
        let changed = self
            .client
            .execute(&statement, &refs)
            .map_err(|e| error(self.location, e))?;
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, StoreError> {
        let statement = self.prepare(sql)?;
        let bound = Self::bind(&statement, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(Bound::as_sql).collect();
        self.client
            .query(&statement, &refs)
            .map_err(|e| error(self.location, e))?
            .iter()
            .map(cells)
            .collect()
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&Cells<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        use postgres::fallible_iterator::FallibleIterator;
        let statement = self.prepare(sql)?;
        let bound = Self::bind(&statement, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(Bound::as_sql).collect();
        let location = self.location;
        // Rows stream from the server as they are read, not gathered first.
        let mut rows = self
            .client
            .query_raw(&statement, refs)
            .map_err(|e| error(location, e))?;
        while let Some(row) = rows.next().map_err(|e| error(location, e))? {
            each(&Cells(&PgRow(&row)))?;
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
        if params.is_empty() {
            return Ok(());
        }
        let types = self.column_types(table, columns)?;
        let location = self.location;
        let writer = self
            .client
            .copy_in(&format!(
                "COPY {table} ({}) FROM STDIN (FORMAT binary)",
                columns.join(", ")
            ))
            .map_err(|e| error(location, e))?;
        let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(writer, &types);
        for row in params.chunks(columns.len()) {
            let bound = types
                .iter()
                .zip(row)
                .map(|(ty, p)| bind(ty, *p))
                .collect::<Result<Vec<Bound>, StoreError>>()?;
            let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(Bound::as_sql).collect();
            writer.write(&refs).map_err(|e| error(location, e))?;
        }
        writer.finish().map_err(|e| error(location, e))?;
        Ok(())
    }
}

impl PgSql<'_> {
    /// The types of `columns` of `table`, as a binary COPY must encode their values: those
    /// of a query of them, prepared (and kept) but never run.
    fn column_types(&mut self, table: &str, columns: &[&str]) -> Result<Vec<Type>, StoreError> {
        let statement = self.prepare(&format!(
            "SELECT {} FROM {table} WHERE false",
            columns.join(", ")
        ))?;
        Ok(statement
            .columns()
            .iter()
            .map(|c| c.type_().clone())
            .collect())
    }
}

/// Whether `e` means the connection is gone: closed, broken on the socket, or ended by the
/// server (SQLSTATE class 08, connection exception, and 57P01 to 57P03, the server shutting
/// down or ending the backend: https://www.postgresql.org/docs/15/errcodes-appendix.html).
pub(crate) fn is_connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        return code.code().starts_with("08")
            || [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
            ]
            .contains(code);
    }
    // An error with no SQLSTATE and an I/O cause: the socket failed.
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// A PostgreSQL error as a [`StoreError`]: [`StoreError::ConnectionLost`] when the connection
/// broke, else [`StoreError::Postgres`] with the server's message and SQLSTATE.
pub(crate) fn error(location: &str, e: postgres::Error) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    };
    if is_connection_lost(&e) {
        return StoreError::ConnectionLost {
            location: location.to_string(),
            message,
        };
    }
    StoreError::Postgres {
        location: location.to_string(),
        message,
        code: e.code().map(|c| c.code().to_string()),
    }
}
