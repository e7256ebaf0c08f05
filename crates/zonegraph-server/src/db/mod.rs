//! The bot's database. [`Tx`] is what the store asks of it, one transaction (or one read) at
//! a time, with two implementations: SQLite ([`Lite`], the embedded default, over the
//! functions of this module) and PostgreSQL (`pg`, several instances on one database).
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
mod legacy;
mod matrix;
mod notices;
pub mod pg;
mod runs;
mod schema;
mod zones;

pub use characters::*;
pub use database::*;
pub use legacy::*;
pub use matrix::*;
pub use notices::*;
pub use runs::*;
pub use schema::*;
pub use zones::*;

pub use pg::is_unavailable;

use anyhow::Result;
use rusqlite::{Connection, Row};
use zonegraph_core::engine::{Character, Run};

/// One transaction on the bot's rows (or one read): everything the store reads and writes
/// for players, notices and the Matrix transport. Writes that race are compare-and-sets on a
/// version column (`false`: another writer got there first, recompute); the same contract on
/// both databases, so `crate::store` does not know which one it talks to.
pub trait Tx {
    /// The player's character, when one was stored.
    fn character(&mut self, user: &str) -> Result<Option<StoredCharacter>>;
    /// Stores `c` if the row is still at `version` (`None`: no row yet).
    fn put_character_cas(
        &mut self,
        user: &str,
        c: &Character,
        version: Option<i64>,
        now: i64,
    ) -> Result<bool>;
    /// The player's active run, or else their latest one.
    fn player_run(&mut self, user: &str) -> Result<Option<StoredRun>>;
    /// The run a link token names.
    fn run_by_token(&mut self, token: &str) -> Result<Option<StoredRun>>;
    /// Every run row, oldest first.
    fn all_runs(&mut self) -> Result<Vec<StoredRun>>;
    /// Inserts a new run for `user`; `None` when the player has an active run already
    /// (another writer started one meanwhile: recompute).
    fn insert_run(&mut self, user: &str, run: &Run) -> Result<Option<StoredRun>>;
    /// Writes `run` over row `id` if it is still at `version`.
    fn update_run_cas(&mut self, id: i64, version: i64, run: &Run) -> Result<bool>;
    /// Users whose active run has a fork offered at or before `due`, sorted.
    fn users_with_forks_due(&mut self, due: i64) -> Result<Vec<String>>;
    /// Queues a notice (see [`push_notice`]).
    fn push_notice(
        &mut self,
        user: &str,
        run_id: &str,
        text: &str,
        html: &str,
        now: i64,
    ) -> Result<()>;
    /// Users with notices not delivered yet, sorted.
    fn users_with_notices(&mut self) -> Result<Vec<String>>;
    /// `user`'s notices not delivered yet, oldest first.
    fn queued_notices(&mut self, user: &str) -> Result<Vec<Notice>>;
    /// Marks `user`'s notices `ids` delivered; how many were still queued.
    fn ack_notices(&mut self, user: &str, ids: &[i64], now: i64) -> Result<usize>;
    /// Claims a chat event for handling: `true` once per event id.
    fn claim_event(&mut self, event_id: &str, room_id: &str, now: i64) -> Result<bool>;
    /// Forgets event claims from before `before`; how many.
    fn prune_events(&mut self, before: i64) -> Result<usize>;
    /// `user`'s direct-message room on Matrix.
    fn dm_room(&mut self, user: &str) -> Result<Option<String>>;
    /// Remembers `room` as `user`'s direct-message room.
    fn set_dm_room(&mut self, user: &str, room: &str, now: i64) -> Result<()>;
    /// Forgets `room` as `user`'s direct-message room.
    fn forget_dm_room(&mut self, user: &str, room: &str) -> Result<()>;
    /// A one-row write (`/healthz`).
    fn health_write(&mut self, now: i64) -> Result<()>;
}

/// [`Tx`] on a SQLite connection (inside the writer's transaction, or a reader), writing
/// gogobee's old run columns beside ours while the table still has them.
#[derive(Debug)]
pub struct Lite<'c> {
    pub conn: &'c Connection,
    pub legacy: LegacyColumns,
}

impl Tx for Lite<'_> {
    fn character(&mut self, user: &str) -> Result<Option<StoredCharacter>> {
        character(self.conn, user)
    }
    fn put_character_cas(
        &mut self,
        user: &str,
        c: &Character,
        version: Option<i64>,
        now: i64,
    ) -> Result<bool> {
        put_character_cas(self.conn, user, c, version, now)
    }
    fn player_run(&mut self, user: &str) -> Result<Option<StoredRun>> {
        player_run(self.conn, user)
    }
    fn run_by_token(&mut self, token: &str) -> Result<Option<StoredRun>> {
        run_by_token(self.conn, token)
    }
    fn all_runs(&mut self) -> Result<Vec<StoredRun>> {
        all_runs(self.conn)
    }
    fn insert_run(&mut self, user: &str, run: &Run) -> Result<Option<StoredRun>> {
        match insert_run(self.conn, user, run, self.legacy) {
            Ok(stored) => Ok(Some(stored)),
            // The unique index on active runs.
            Err(e) if is_constraint(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn update_run_cas(&mut self, id: i64, version: i64, run: &Run) -> Result<bool> {
        update_run_cas(self.conn, id, version, run, self.legacy)
    }
    fn users_with_forks_due(&mut self, due: i64) -> Result<Vec<String>> {
        users_with_forks_due(self.conn, due)
    }
    fn push_notice(
        &mut self,
        user: &str,
        run_id: &str,
        text: &str,
        html: &str,
        now: i64,
    ) -> Result<()> {
        push_notice(self.conn, user, run_id, text, html, now)
    }
    fn users_with_notices(&mut self) -> Result<Vec<String>> {
        users_with_notices(self.conn)
    }
    fn queued_notices(&mut self, user: &str) -> Result<Vec<Notice>> {
        queued_notices(self.conn, user)
    }
    fn ack_notices(&mut self, user: &str, ids: &[i64], now: i64) -> Result<usize> {
        ack_notices(self.conn, user, ids, now)
    }
    fn claim_event(&mut self, event_id: &str, room_id: &str, now: i64) -> Result<bool> {
        claim_event(self.conn, event_id, room_id, now)
    }
    fn prune_events(&mut self, before: i64) -> Result<usize> {
        prune_events(self.conn, before)
    }
    fn dm_room(&mut self, user: &str) -> Result<Option<String>> {
        dm_room(self.conn, user)
    }
    fn set_dm_room(&mut self, user: &str, room: &str, now: i64) -> Result<()> {
        set_dm_room(self.conn, user, room, now)
    }
    fn forget_dm_room(&mut self, user: &str, room: &str) -> Result<()> {
        forget_dm_room(self.conn, user, room)
    }
    fn health_write(&mut self, now: i64) -> Result<()> {
        health_write(self.conn, now)
    }
}

/// Whether `e` is SQLite's constraint violation (a unique index said no).
fn is_constraint(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::ConstraintViolation
        )
    })
}

/// A JSON text column, decoded.
fn json_col<T: serde::de::DeserializeOwned>(r: &Row, i: usize) -> rusqlite::Result<T> {
    let s: String = r.get(i)?;
    serde_json::from_str(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

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
