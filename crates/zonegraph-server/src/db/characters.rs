//! Characters: `player_character`, one row per player.

use std::collections::BTreeSet;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use zonegraph_core::Ability;
use zonegraph_core::engine::Character;

use super::json_col;

/// The player's character, when one was stored.
pub fn character(conn: &Connection, user: &str) -> Result<Option<Character>> {
    let mut st = conn.prepare_cached(
        "SELECT level, str, dex, con, int, wis, cha, keys_json FROM player_character
         WHERE user_id = ?1",
    )?;
    let row = st
        .query_row([user], |r| {
            let mut scores = [10; 6];
            for a in Ability::ALL {
                scores[a.index()] = r.get(1 + a.index())?;
            }
            let keys: BTreeSet<String> = json_col(r, 7)?;
            Ok(Character {
                level: r.get(0)?,
                scores,
                keys,
            })
        })
        .optional()?;
    Ok(row)
}

/// Stores the player's character.
pub fn put_character(tx: &Connection, user: &str, c: &Character, now: i64) -> Result<()> {
    let mut st = tx.prepare_cached(
        "INSERT INTO player_character (user_id, level, str, dex, con, int, wis, cha, keys_json,
           updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT(user_id) DO UPDATE SET level = excluded.level, str = excluded.str,
           dex = excluded.dex, con = excluded.con, int = excluded.int, wis = excluded.wis,
           cha = excluded.cha, keys_json = excluded.keys_json,
           updated_at_ms = excluded.updated_at_ms",
    )?;
    let s = c.scores;
    st.execute(params![
        user,
        c.level,
        s[0],
        s[1],
        s[2],
        s[3],
        s[4],
        s[5],
        serde_json::to_string(&c.keys)?,
        now
    ])?;
    Ok(())
}
