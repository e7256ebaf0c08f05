//! `zonegraph migrate --from sqlite:PATH --to postgres://…`: copies a whole SQLite database
//! (at the current schema) into an empty PostgreSQL one, in one transaction, and checks that
//! every table has as many rows on both sides.

use anyhow::{Context as _, Result, bail};
use rusqlite::Connection;
use rusqlite::types::Value;
use tokio_postgres::types::{ToSql, Type};

use super::pg::Pg;

/// The tables copied, parents first. Row keys are kept (so notices and runs keep their
/// order); `zone_node`'s insertion order is kept by copying in `rowid` order.
const TABLES: [(&str, &str); 14] = [
    ("zone_meta", "zone_id"),
    ("zone_node", "rowid"),
    ("zone_edge", "edge_id"),
    ("player_character", "user_id"),
    ("dnd_zone_run", "rowid"),
    ("zone_notice", "notice_id"),
    ("matrix_event", "event_id"),
    ("matrix_dm", "user_id"),
    ("zone_version", "id"),
    ("zone_file_version", "seq"),
    ("zone_run_history", "run_id"),
    ("zone_api_token", "token_id"),
    ("zone_event_out", "event_id"),
    ("zone_event_dead", "event_id"),
];

/// Tables whose rows a player plays with: the target must have none of them (a copy never
/// merges two bots' histories).
const MUST_BE_EMPTY: [&str; 7] = [
    "dnd_zone_run",
    "player_character",
    "zone_notice",
    "matrix_dm",
    "zone_run_history",
    "zone_event_out",
    "zone_event_dead",
];

/// What was copied: each table and its row count (equal on both sides).
pub type Copied = Vec<(&'static str, i64)>;

/// Connects to the PostgreSQL database at `url`, migrates it and copies `from` into it
/// ([`sqlite_to_postgres`]).
pub fn sqlite_to_postgres_at(from: &Connection, url: &str) -> Result<Copied> {
    let to = Pg::connect(url)?;
    to.migrate()?;
    sqlite_to_postgres(from, &to)
}

/// Copies `from` (migrated to the current schema) into `to` (migrated, empty of players'
/// rows); gogobee's retired run columns are not copied (PostgreSQL has none).
pub fn sqlite_to_postgres(from: &Connection, to: &Pg) -> Result<Copied> {
    let mut plan = Vec::new();
    for (table, order) in TABLES {
        let cols: Vec<String> = super::columns(from, table)?;
        let mut rows = Vec::new();
        let mut st = from.prepare(&format!(
            "SELECT {} FROM {table} ORDER BY {order}",
            cols.join(", ")
        ))?;
        let mut q = st.query([])?;
        while let Some(r) = q.next()? {
            let mut row = Vec::with_capacity(cols.len());
            for i in 0..cols.len() {
                row.push(r.get::<_, Value>(i)?);
            }
            rows.push(row);
        }
        plan.push((table, cols, rows));
    }
    to.with_transaction(async |tx| {
        for table in MUST_BE_EMPTY {
            let n: i64 = tx
                .query_one(&format!("SELECT count(*) FROM {table}"), &[])
                .await?
                .get(0);
            if n > 0 {
                bail!(
                    "the target database already has {n} rows in {table}: copy into an empty one"
                );
            }
        }
        // The zone tables are replaced whole (a started instance imported its zones).
        tx.batch_execute(
            "DELETE FROM zone_edge; DELETE FROM zone_node; DELETE FROM zone_meta;
             DELETE FROM matrix_event; DELETE FROM zone_version; DELETE FROM zone_file_version;",
        )
        .await?;
        let mut copied = Vec::new();
        for (table, cols, rows) in &plan {
            let pg_cols: Vec<String> = tx
                .query(
                    "SELECT column_name::text FROM information_schema.columns
                     WHERE table_schema = current_schema() AND table_name = $1",
                    &[table],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            // SQLite's `rowid` key is PostgreSQL's `id` column in the run table.
            let keep: Vec<(usize, String)> = cols
                .iter()
                .enumerate()
                .filter(|(_, c)| pg_cols.contains(c))
                .map(|(i, c)| (i, c.clone()))
                .collect();
            let names: Vec<&str> = keep.iter().map(|(_, c)| c.as_str()).collect();
            let marks: Vec<String> = (1..=keep.len()).map(|i| format!("${i}")).collect();
            let st = tx
                .prepare(&format!(
                    "INSERT INTO {table} ({}) OVERRIDING SYSTEM VALUE VALUES ({})",
                    names.join(", "),
                    marks.join(", ")
                ))
                .await?;
            let types = st.params().to_vec();
            for row in rows {
                let mut values: Vec<Box<dyn ToSql + Sync + Send>> = Vec::with_capacity(keep.len());
                for ((i, col), ty) in keep.iter().zip(&types) {
                    values.push(param(&row[*i], ty).with_context(|| {
                        format!("{table}.{col}: a value PostgreSQL's column cannot take")
                    })?);
                }
                let refs: Vec<&(dyn ToSql + Sync)> =
                    values.iter().map(|v| &**v as &(dyn ToSql + Sync)).collect();
                tx.execute(&st, &refs)
                    .await
                    .with_context(|| format!("cannot copy a row of {table}"))?;
            }
            // Identity columns go on after the largest key copied.
            // (`matrix_event.event_id` is a chat event's text id, not an identity.)
            for col in ["id", "edge_id", "notice_id", "seq", "event_id"] {
                let identity = col != "event_id" || *table == "zone_event_out";
                if identity && pg_cols.iter().any(|c| c == col) {
                    tx.execute(
                        &format!(
                            "SELECT setval(pg_get_serial_sequence('{table}', '{col}'),
                               GREATEST((SELECT max({col}) FROM {table}), 1))"
                        ),
                        &[],
                    )
                    .await?;
                }
            }
            let n: i64 = tx
                .query_one(&format!("SELECT count(*) FROM {table}"), &[])
                .await?
                .get(0);
            if n != rows.len() as i64 {
                bail!(
                    "{table}: {} rows read, {n} in PostgreSQL after the copy",
                    rows.len()
                );
            }
            copied.push((*table, n));
        }
        if !copied.iter().any(|(t, n)| *t == "zone_version" && *n == 1) {
            tx.execute("INSERT INTO zone_version (id, version) VALUES (1, 1)", &[])
                .await?;
        }
        tx.execute("UPDATE zone_version SET version = version + 1", &[])
            .await?;
        Ok(copied)
    })
}

/// A SQLite value as a parameter of PostgreSQL type `ty` (every column is BIGINT or TEXT).
fn param(v: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync + Send>> {
    Ok(match (v, ty) {
        (Value::Null, &Type::INT8) => Box::new(None::<i64>),
        (Value::Null, &Type::TEXT) => Box::new(None::<String>),
        (Value::Integer(i), &Type::INT8) => Box::new(*i),
        (Value::Integer(i), &Type::TEXT) => Box::new(i.to_string()),
        (Value::Text(s), &Type::TEXT) => Box::new(s.clone()),
        (Value::Text(s), &Type::INT8) => Box::new(
            s.trim()
                .parse::<i64>()
                .with_context(|| format!("{s:?} is not a whole number"))?,
        ),
        (Value::Real(r), &Type::INT8) if r.fract() == 0.0 => Box::new(*r as i64),
        (other, ty) => bail!("{other:?} for a {ty} column"),
    })
}
