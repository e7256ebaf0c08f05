//! Characters: `player_character`, one row per player, written by compare-and-set on its
//! version like runs.

use std::collections::BTreeSet;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use zonegraph_core::Ability;
use zonegraph_core::engine::Character;

use super::json_col;

/// A character row: the character and the version its next write must match.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredCharacter {
    pub character: Character,
    pub version: i64,
}

/// `keys_json`: the list of keys, or `{"keys": [...], "xp": n}` once the character has
/// experience (the table has no column for it; a list reads as no XP).
#[derive(Debug, Default, serde::Serialize)]
pub(super) struct Keys {
    pub(super) keys: BTreeSet<String>,
    pub(super) xp: u32,
}

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Repr {
            List(BTreeSet<String>),
            WithXp {
                keys: BTreeSet<String>,
                #[serde(default)]
                xp: u32,
            },
        }
        Ok(match Repr::deserialize(d)? {
            Repr::List(keys) => Keys { keys, xp: 0 },
            Repr::WithXp { keys, xp } => Keys { keys, xp },
        })
    }
}

pub(super) fn keys_json(c: &Character) -> Result<String> {
    Ok(if c.xp == 0 {
        serde_json::to_string(&c.keys)?
    } else {
        serde_json::to_string(&Keys {
            keys: c.keys.clone(),
            xp: c.xp,
        })?
    })
}

/// The player's character, when one was stored.
pub fn character(conn: &Connection, user: &str) -> Result<Option<StoredCharacter>> {
    let mut st = conn.prepare_cached(
        "SELECT level, str, dex, con, int, wis, cha, keys_json, version FROM player_character
         WHERE user_id = ?1",
    )?;
    let row = st
        .query_row([user], |r| {
            let mut scores = [10; 6];
            for a in Ability::ALL {
                scores[a.index()] = r.get(1 + a.index())?;
            }
            let Keys { keys, xp } = json_col(r, 7)?;
            Ok(StoredCharacter {
                character: Character {
                    level: r.get(0)?,
                    scores,
                    keys,
                    xp,
                },
                version: r.get(8)?,
            })
        })
        .optional()?;
    Ok(row)
}

/// Stores the player's character if its row is still at `version` (`None`: there was no
/// row); false when another writer got there first (compare-and-set).
pub fn put_character_cas(
    tx: &Connection,
    user: &str,
    c: &Character,
    version: Option<i64>,
    now: i64,
) -> Result<bool> {
    let s = c.scores;
    let keys = keys_json(c)?;
    let n = match version {
        None => tx
            .prepare_cached(
                "INSERT INTO player_character (user_id, level, str, dex, con, int, wis, cha,
                   keys_json, updated_at_ms, version)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0)
                 ON CONFLICT(user_id) DO NOTHING",
            )?
            .execute(params![
                user, c.level, s[0], s[1], s[2], s[3], s[4], s[5], keys, now
            ])?,
        Some(v) => tx
            .prepare_cached(
                "UPDATE player_character SET level = ?2, str = ?3, dex = ?4, con = ?5, int = ?6,
                   wis = ?7, cha = ?8, keys_json = ?9, updated_at_ms = ?10,
                   version = version + 1
                 WHERE user_id = ?1 AND version = ?11",
            )?
            .execute(params![
                user, c.level, s[0], s[1], s[2], s[3], s[4], s[5], keys, now, v
            ])?,
    };
    Ok(n == 1)
}
