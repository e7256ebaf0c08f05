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
mod legacy;
mod matrix;
mod notices;
mod runs;
mod schema;
mod zones;

pub use characters::*;
pub use legacy::*;
pub use matrix::*;
pub use notices::*;
pub use runs::*;
pub use schema::*;
pub use zones::*;

use rusqlite::Row;

/// A JSON text column, decoded.
fn json_col<T: serde::de::DeserializeOwned>(r: &Row, i: usize) -> rusqlite::Result<T> {
    let s: String = r.get(i)?;
    serde_json::from_str(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}
