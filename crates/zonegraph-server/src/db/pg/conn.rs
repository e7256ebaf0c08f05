//! One PostgreSQL transaction as the statements see it ([`crate::db::Conn`]): statements
//! pipelined, `?N` placeholders turned into `$N`, values bound as the types PostgreSQL
//! inferred.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use anyhow::{Context as _, Result, bail};
use deadpool_postgres::ClientWrapper;
use tokio_postgres::Statement;
use tokio_postgres::types::{ToSql, Type};

use super::Pg;
use crate::db::{Conn, Row, RowRef, Stmt, Value, dollar_placeholders};

/// [`Conn`] in one PostgreSQL transaction on one pooled connection: each statement's `?N`
/// placeholders become `$N`, and values are bound as the types PostgreSQL inferred for them.
///
/// Round trips: the transaction's BEGIN is not sent alone but with its first statements,
/// and the statements of one [`Conn::query_all`] or [`Conn::execute_all`] go together, so
/// each batch costs one round trip (tokio-postgres pipelines requests sent before their
/// answers are awaited). A transaction not committed is rolled back when this is dropped,
/// without waiting: the connection goes back to the pool with the ROLLBACK queued ahead of
/// whatever its next user sends.
pub(super) struct PgConn<'t> {
    pg: &'t Pg,
    client: &'t ClientWrapper,
    /// The BEGIN while it is not sent.
    begin: Cell<Option<&'static str>>,
    /// A BEGIN went and neither COMMIT nor ROLLBACK yet.
    open: Cell<bool>,
    /// A run or a sheet was written: its commit tells the other instances.
    played: Cell<bool>,
}

/// What one request of a batch answered.
enum Answer {
    Begun,
    Rows(Vec<tokio_postgres::Row>),
    Count(u64),
}

type Request<'a> = Pin<Box<dyn Future<Output = Result<Answer, tokio_postgres::Error>> + 'a>>;

/// Awaits `requests` with every one of them sent, in order, before any answer is awaited:
/// tokio-postgres sends a request when its future is first polled, so each is polled once
/// here first (one round trip for the batch).
async fn pipelined(mut requests: Vec<Request<'_>>) -> Vec<Result<Answer, tokio_postgres::Error>> {
    let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
    let ready: Vec<_> = requests
        .iter_mut()
        .map(|r| match r.as_mut().poll(&mut cx) {
            Poll::Ready(answer) => Some(answer),
            Poll::Pending => None,
        })
        .collect();
    let mut out = Vec::with_capacity(requests.len());
    for (request, ready) in requests.into_iter().zip(ready) {
        out.push(match ready {
            Some(answer) => answer,
            None => request.await,
        });
    }
    out
}

impl<'t> PgConn<'t> {
    pub(super) fn new(pg: &'t Pg, client: &'t ClientWrapper, begin: &'static str) -> PgConn<'t> {
        PgConn {
            pg,
            client,
            begin: Cell::new(Some(begin)),
            open: Cell::new(false),
            played: Cell::new(false),
        }
    }

    /// Commits what was sent (nothing to do when nothing was).
    pub(super) fn commit(&self) -> Result<()> {
        if self.begin.take().is_some() {
            return Ok(());
        }
        self.pg.round_trips.fetch_add(1, Ordering::Relaxed);
        self.open.set(false);
        self.pg
            .block_on(self.client.batch_execute("COMMIT"))
            .context("cannot commit")?;
        if self.played.get() {
            self.pg.played();
        }
        Ok(())
    }

    /// `stmt` prepared (once per connection: a statement this connection has not seen costs
    /// a round trip) and its values bound to the types PostgreSQL inferred.
    async fn prepared(
        &self,
        stmt: &Stmt,
    ) -> Result<(Statement, Vec<Box<dyn ToSql + Sync + Send>>)> {
        let sql = dollar_placeholders(&stmt.sql);
        let cached = self.client.statement_cache.size();
        let st = self.client.prepare_cached(&sql).await?;
        if self.client.statement_cache.size() != cached {
            self.pg.prepares.fetch_add(1, Ordering::Relaxed);
        }
        anyhow::ensure!(
            st.params().len() == stmt.params.len(),
            "a statement takes {} values, {} were given",
            st.params().len(),
            stmt.params.len()
        );
        let bound = stmt
            .params
            .iter()
            .zip(st.params())
            .map(|(v, ty)| param(v, ty))
            .collect::<Result<_>>()?;
        Ok((st, bound))
    }

    /// Sends `stmts` (after the BEGIN, if it is not sent yet) in one round trip; their
    /// answers in order (rows when `rows`, else counts), or the first error.
    fn send(&self, stmts: &[Stmt], rows: bool) -> Result<Vec<Answer>> {
        self.pg.block_on(async {
            let mut prepared = Vec::with_capacity(stmts.len());
            for stmt in stmts {
                prepared.push(self.prepared(stmt).await?);
            }
            let bound: Vec<Vec<&(dyn ToSql + Sync)>> = prepared
                .iter()
                .map(|(_, values)| values.iter().map(|b| &**b as _).collect())
                .collect();
            let mut requests: Vec<Request<'_>> = Vec::with_capacity(stmts.len() + 1);
            if let Some(begin) = self.begin.take() {
                self.open.set(true);
                requests.push(Box::pin(async move {
                    self.client
                        .batch_execute(begin)
                        .await
                        .map(|()| Answer::Begun)
                }));
            }
            for ((st, _), values) in prepared.iter().zip(&bound) {
                requests.push(if rows {
                    Box::pin(async move { self.client.query(st, values).await.map(Answer::Rows) })
                } else {
                    Box::pin(
                        async move { self.client.execute(st, values).await.map(Answer::Count) },
                    )
                });
            }
            self.pg.round_trips.fetch_add(1, Ordering::Relaxed);
            let mut out = Vec::with_capacity(stmts.len());
            for answer in pipelined(requests).await {
                match answer? {
                    Answer::Begun => {}
                    answer => out.push(answer),
                }
            }
            Ok(out)
        })
    }
}

impl Drop for PgConn<'_> {
    fn drop(&mut self) {
        if self.open.get() {
            // Sent at the first poll; its answer is not waited for (see the type).
            let mut rollback = std::pin::pin!(self.client.batch_execute("ROLLBACK"));
            let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
            let _ = rollback.as_mut().poll(&mut cx);
        }
    }
}

/// `v` as a parameter of type `ty`: our integers go to any integer or boolean column, text
/// to text.
fn param(v: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync + Send>> {
    Ok(match (v, ty) {
        (Value::Int(i), &Type::INT8) => Box::new(*i),
        (Value::Int(i), &Type::INT4) => Box::new(i32::try_from(*i)?),
        (Value::Int(i), &Type::INT2) => Box::new(i16::try_from(*i)?),
        (Value::Int(i), &Type::BOOL) => Box::new(*i != 0),
        (Value::Text(t), _) if <String as ToSql>::accepts(ty) => Box::new(t.clone()),
        (Value::Null, &Type::INT8 | &Type::INT4 | &Type::INT2) => Box::new(None::<i64>),
        (Value::Null, &Type::BOOL) => Box::new(None::<bool>),
        (Value::Null, _) if <String as ToSql>::accepts(ty) => Box::new(None::<String>),
        (v, ty) => bail!("cannot bind {v:?} to a parameter of type {ty}"),
    })
}

/// Column `i` of `r` as our value.
fn column(r: &tokio_postgres::Row, i: usize) -> Result<Value> {
    let ty = r.columns()[i].type_();
    let v = match *ty {
        Type::INT8 => r.try_get::<_, Option<i64>>(i)?.map(Value::Int),
        Type::INT4 => r
            .try_get::<_, Option<i32>>(i)?
            .map(|v| Value::Int(v.into())),
        Type::INT2 => r
            .try_get::<_, Option<i16>>(i)?
            .map(|v| Value::Int(v.into())),
        Type::BOOL => r
            .try_get::<_, Option<bool>>(i)?
            .map(|v| Value::Int(v.into())),
        _ if <String as tokio_postgres::types::FromSql>::accepts(ty) => {
            r.try_get::<_, Option<String>>(i)?.map(Value::Text)
        }
        _ => bail!("column {i} is of type {ty}, which zonegraph does not read"),
    };
    Ok(v.unwrap_or(Value::Null))
}

impl RowRef for tokio_postgres::Row {
    fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match column(self, i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            Value::Text(_) => bail!("column {i} is text where an integer was expected"),
        }
    }

    fn str(&self, i: usize) -> Result<&str> {
        Ok(self.try_get::<_, &str>(i)?)
    }
}

/// Our row of a row PostgreSQL sent.
fn row_of(r: &tokio_postgres::Row) -> Result<Row> {
    Ok(Row((0..r.len())
        .map(|i| column(r, i))
        .collect::<Result<_>>()?))
}

impl Conn for PgConn<'_> {
    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64> {
        Ok(self.execute_all(&[Stmt::new(sql, params)])?[0])
    }

    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        Ok(self
            .query_all(&[Stmt::new(sql, params)])?
            .pop()
            .unwrap_or_default())
    }

    /// The rows as PostgreSQL sent them, read in place: none copied into our [`Row`].
    fn each_row(
        &self,
        sql: &str,
        params: &[Value],
        each: &mut dyn FnMut(&dyn RowRef) -> Result<()>,
    ) -> Result<()> {
        for answer in self.send(&[Stmt::new(sql, params)], true)? {
            let Answer::Rows(rows) = answer else {
                bail!("a query answered without rows");
            };
            for row in &rows {
                each(row)?;
            }
        }
        Ok(())
    }

    fn query_all(&self, stmts: &[Stmt]) -> Result<Vec<Vec<Row>>> {
        self.send(stmts, true)?
            .iter()
            .map(|answer| match answer {
                Answer::Rows(rows) => rows.iter().map(row_of).collect(),
                _ => bail!("a query answered without rows"),
            })
            .collect()
    }

    fn execute_all(&self, stmts: &[Stmt]) -> Result<Vec<u64>> {
        self.send(stmts, false)?
            .iter()
            .map(|answer| match answer {
                Answer::Count(n) => Ok(*n),
                _ => bail!("a statement answered without a count"),
            })
            .collect()
    }

    fn played(&self) {
        self.played.set(true);
    }

    fn run_key(&self) -> &'static str {
        "id"
    }

    fn node_order(&self) -> &'static str {
        "seq"
    }
}
