//! The bot's database. [`Database`] owns which one (SQLite, the embedded default, or
//! PostgreSQL, `pg`, for several instances on one database); [`Tx`] is what the store asks of
//! it, one transaction (or one read) at a time, each statement written once for both (`sql`:
//! one text, SQLite's placeholders turned into PostgreSQL's).
//!
//! SQLite: the schema (the zone tables, the bot's run table, the retirement of its old
//! columns) and its migrations (`schema`), zone import
//! (`zones`), runs (`runs`, with the legacy warm-up in `legacy`), characters, notices, and the
//! Matrix transport's handled events and direct-message rooms (`matrix`).
//! The only module that knows SQL; the rest of the server calls these functions.
//!
//! Durability: WAL with `synchronous = FULL`. In WAL mode FULL syncs the log on every commit,
//! so a move acknowledged to a player survives not only a killed process (NORMAL would do for
//! that) but a power cut or kernel crash too; NORMAL could lose the last commits there, and a
//! chat bot that said "you enter the Side Chapel" and then forgets it is the bug we must not
//! have. The cost is an fsync per commit; `crate::store` group-commits concurrent writes so
//! one fsync covers many commands, and BENCHMARKS.md measures it against a bare loop of write
//! transactions with the same setting.

mod characters;
pub mod copy;
mod database;
mod events;
mod legacy;
mod matrix;
mod notices;
pub mod pg;
mod played;
mod runs;
mod schema;
mod sql;
pub mod tls;
mod tokens;
mod tx;
mod versions;
mod zones;

pub use characters::*;
pub use database::*;
pub use events::*;
pub use legacy::*;
pub use matrix::*;
pub use notices::*;
pub use played::RecentRuns;
pub use runs::*;
pub use schema::*;
pub use sql::{Conn, Row, RowRef, Stmt, Value, dollar_placeholders};
pub use tokens::*;
pub use tx::{PlayerRows, Tx};
pub use versions::*;
pub use zones::*;

pub use pg::is_unavailable;

use anyhow::Result;

/// SQLite write transactions per second for 3 s, the server's physical limit (the load
/// benchmarks' ceiling): one row of about a run's size updated in its own transaction, on a
/// fresh database at `path` with the server's settings (WAL, `synchronous = FULL`).
pub fn bare_write_rate(path: &std::path::Path) -> Result<f64> {
    use std::time::{Duration, Instant};
    let conn = open(path)?;
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")?;
    conn.execute("INSERT INTO t VALUES (1, '')", [])?;
    let payload = "x".repeat(600);
    let (mut n, start) = (0u64, Instant::now());
    while start.elapsed() < Duration::from_secs(3) {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        conn.execute(
            "UPDATE t SET v = ?1 WHERE id = 1",
            [format!("{payload}{n}")],
        )?;
        conn.execute_batch("COMMIT")?;
        n += 1;
    }
    Ok(n as f64 / start.elapsed().as_secs_f64())
}
