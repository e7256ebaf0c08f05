//! One statement text for both databases. [`Conn`] is what a statement needs of a database
//! (run it with values, read rows back) and [`crate::db::Tx`] writes each statement once, in
//! SQLite's numbered placeholders (`?1`); PostgreSQL's connection turns them into its own
//! (`$1`, [`dollar_placeholders`]) before it prepares them. Values and rows are the two
//! column types the schema has on both sides: 64-bit integers and text.

use anyhow::{Result, anyhow, bail};

/// A value bound to a statement or read from a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// The values of a statement, in placeholder order: `vals![user, level, keys]`.
macro_rules! vals {
    ($($v:expr),* $(,)?) => {
        [$($crate::db::Value::from($v)),*]
    };
}
pub(crate) use vals;

/// One row read back, its columns in the statement's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn at(&self, i: usize) -> Result<&Value> {
        self.0
            .get(i)
            .ok_or_else(|| anyhow!("a row has no column {i} (it has {})", self.0.len()))
    }

    /// Column `i` as an integer.
    pub fn int(&self, i: usize) -> Result<i64> {
        match self.at(i)? {
            Value::Int(v) => Ok(*v),
            other => bail!("column {i} is {other:?} where an integer was expected"),
        }
    }

    /// Column `i` as an integer, NULL as `None`.
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.at(i)? {
            Value::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    /// Column `i` as a 0/1 flag (any non-zero integer is set).
    pub fn flag(&self, i: usize) -> Result<bool> {
        Ok(self.int(i)? != 0)
    }

    /// Column `i` as text.
    pub fn text(&self, i: usize) -> Result<String> {
        match self.at(i)? {
            Value::Text(v) => Ok(v.clone()),
            other => bail!("column {i} is {other:?} where text was expected"),
        }
    }

    /// Column `i` as an integer that fits `T` (a level, a score).
    pub fn small<T: TryFrom<i64>>(&self, i: usize) -> Result<T> {
        let v = self.int(i)?;
        T::try_from(v).map_err(|_| anyhow!("column {i} holds {v}, out of range"))
    }
}

/// A row read in place, its text borrowed from the database's own buffer: what a caller
/// that decodes many rows one at a time reads ([`Conn::each_row`]), copying nothing it does
/// not keep.
pub trait RowRef {
    /// Column `i` as an integer, NULL as `None`.
    fn opt_int(&self, i: usize) -> Result<Option<i64>>;
    /// Column `i` as text.
    fn str(&self, i: usize) -> Result<&str>;

    /// Column `i` as an integer.
    fn int(&self, i: usize) -> Result<i64> {
        self.opt_int(i)?
            .ok_or_else(|| anyhow!("column {i} is NULL where an integer was expected"))
    }

    /// Column `i` as a 0/1 flag (any non-zero integer is set).
    fn flag(&self, i: usize) -> Result<bool> {
        Ok(self.int(i)? != 0)
    }
}

impl RowRef for Row {
    fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        Row::opt_int(self, i)
    }

    fn str(&self, i: usize) -> Result<&str> {
        match self.at(i)? {
            Value::Text(v) => Ok(v),
            other => bail!("column {i} is {other:?} where text was expected"),
        }
    }
}

impl RowRef for rusqlite::Row<'_> {
    fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        use rusqlite::types::ValueRef;
        match self.get_ref(i)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) => Ok(Some(v)),
            other => bail!("column {i} is {other:?} where an integer was expected"),
        }
    }

    fn str(&self, i: usize) -> Result<&str> {
        match self.get_ref(i)? {
            rusqlite::types::ValueRef::Text(t) => {
                std::str::from_utf8(t).map_err(|_| anyhow!("column {i} is not UTF-8 text"))
            }
            other => bail!("column {i} is {other:?} where text was expected"),
        }
    }
}

/// One statement and its values, for the statements a transaction sends together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub sql: String,
    pub params: Vec<Value>,
}

impl Stmt {
    pub fn new(sql: impl Into<String>, params: impl Into<Vec<Value>>) -> Stmt {
        Stmt {
            sql: sql.into(),
            params: params.into(),
        }
    }
}

/// What a statement needs of a database, inside one transaction (or one read).
pub trait Conn {
    /// Runs a statement that returns no rows; how many rows it changed.
    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64>;
    /// Runs a statement and returns its rows.
    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>>;
    /// Runs a statement and hands its rows to `each`, one at a time and read in place, in
    /// the order the database gives them; the first error `each` returns stops it.
    fn each_row(
        &self,
        sql: &str,
        params: &[Value],
        each: &mut dyn FnMut(&dyn RowRef) -> Result<()>,
    ) -> Result<()> {
        for row in self.query(sql, params)? {
            each(&row)?;
        }
        Ok(())
    }
    /// The rows of each of `stmts`, run in order. PostgreSQL sends them together: one round
    /// trip for all (SQLite, in-process, just runs them).
    fn query_all(&self, stmts: &[Stmt]) -> Result<Vec<Vec<Row>>> {
        stmts
            .iter()
            .map(|s| self.query(&s.sql, &s.params))
            .collect()
    }
    /// How many rows each of `stmts` changed, run in order (none returns rows); sent together
    /// as [`Conn::query_all`]'s. Each runs even when one before it changed nothing: a caller
    /// that needs all of them to hold rolls back.
    fn execute_all(&self, stmts: &[Stmt]) -> Result<Vec<u64>> {
        stmts
            .iter()
            .map(|s| self.execute(&s.sql, &s.params))
            .collect()
    }
    /// Says that this transaction wrote a run or a sheet (what the run pages follow): at its
    /// commit PostgreSQL's tells the other instances; SQLite has none to tell.
    fn played(&self) {}
    /// The key of a `dnd_zone_run` row: `rowid` on SQLite (gogobee's table is keyed by its
    /// text `run_id`, and `rowid` is the alias of our own `id`), `id` on PostgreSQL.
    fn run_key(&self) -> &'static str;
    /// What orders `zone_node` rows as they were inserted (the file's order): `rowid` on
    /// SQLite, the identity column `seq` on PostgreSQL.
    fn node_order(&self) -> &'static str;
}

/// `sql` with SQLite's numbered placeholders (`?1`) as PostgreSQL's (`$1`); text in quotes
/// is left alone.
pub fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => quoted = !quoted,
            '?' if !quoted && chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Integer(*v),
            Value::Text(v) => ValueRef::Text(v.as_bytes()),
        }))
    }
}

/// SQLite's value as ours: integers and text (a real or a blob is not a column of ours).
fn lite_value(v: rusqlite::types::ValueRef<'_>, i: usize) -> Result<Value> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(v) => Value::Int(v),
        ValueRef::Text(t) => Value::Text(
            String::from_utf8(t.to_vec()).map_err(|_| anyhow!("column {i} is not UTF-8 text"))?,
        ),
        ValueRef::Real(v) => bail!("column {i} holds a real number ({v})"),
        ValueRef::Blob(_) => bail!("column {i} holds a blob"),
    })
}

impl Conn for rusqlite::Connection {
    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64> {
        let n = self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(n as u64)
    }

    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let mut st = self.prepare_cached(sql)?;
        let width = st.column_count();
        let mut rows = st.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let row = (0..width)
                .map(|i| lite_value(r.get_ref(i)?, i))
                .collect::<Result<_>>()?;
            out.push(Row(row));
        }
        Ok(out)
    }

    fn each_row(
        &self,
        sql: &str,
        params: &[Value],
        each: &mut dyn FnMut(&dyn RowRef) -> Result<()>,
    ) -> Result<()> {
        let mut st = self.prepare_cached(sql)?;
        let mut rows = st.query(rusqlite::params_from_iter(params))?;
        while let Some(r) = rows.next()? {
            each(r)?;
        }
        Ok(())
    }

    fn run_key(&self) -> &'static str {
        "rowid"
    }

    fn node_order(&self) -> &'static str {
        "rowid"
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        assert_eq!(
            dollar_placeholders("SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d IN (?10, ?)"),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d IN ($10, ?)"
        );
        assert_eq!(
            dollar_placeholders("x = 'it''s ?3' OR y = ?3"),
            "x = 'it''s ?3' OR y = $3"
        );
    }

    #[test]
    fn sqlite_rows_read_back_and_batches_run_in_order() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, m INTEGER)")
            .unwrap();
        conn.execute_batch("BEGIN").unwrap();
        let ins = "INSERT INTO t (k, n, m) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING";
        let up = "UPDATE t SET n = n + 1 WHERE k = ?1";
        // A taken key changes nothing and leaves the transaction usable; each statement
        // runs after the one before it.
        let counts = conn
            .execute_all(&[
                Stmt::new(ins, vals!["a", 7_i64, None::<i64>]),
                Stmt::new(ins, vals!["a", 8_i64, 1_i64]),
                Stmt::new(up, vals!["a"]),
                Stmt::new(up, vals!["b"]),
            ])
            .unwrap();
        assert_eq!(counts, [1, 0, 1, 0]);
        conn.execute_batch("COMMIT").unwrap();
        let rows = conn
            .query_all(&[
                Stmt::new("SELECT k, n, m FROM t", []),
                Stmt::new("SELECT k FROM t WHERE k = ?1", vals!["b"]),
            ])
            .unwrap();
        assert_eq!(rows[1], []);
        let rows = &rows[0];
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].text(0).unwrap(), "a");
        assert_eq!(rows[0].int(1).unwrap(), 8);
        assert_eq!(rows[0].opt_int(2).unwrap(), None);
        assert!(rows[0].text(1).is_err() && rows[0].int(3).is_err());
        // A NOT NULL or type error is not "taken": it is an error.
        conn.execute_batch("CREATE TABLE u (k TEXT NOT NULL)")
            .unwrap();
        let e = conn
            .execute_all(&[Stmt::new(
                "INSERT INTO u (k) VALUES (?1) ON CONFLICT DO NOTHING",
                vals![None::<i64>],
            )])
            .unwrap_err();
        assert!(format!("{e:#}").contains("NOT NULL"), "{e:#}");
    }
}
