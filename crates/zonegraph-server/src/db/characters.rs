//! Characters: `player_character`, one row per player, written by compare-and-set on its
//! version like runs.

use std::collections::BTreeSet;

use anyhow::Result;
use zonegraph_core::engine::Character;

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

/// A player's character in gogobee's own tables, as stored there (read only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GogobeeCharacter {
    /// `dnd_level`, `dnd_xp`.
    pub level: i64,
    pub xp: i64,
    /// `str_score` … `cha_score`, in [`zonegraph_core::Ability`] order.
    pub scores: [i64; 6],
    /// `pending_setup = 0`: the player chose their scores (before that they are gogobee's
    /// placeholders, all 8).
    pub set_up: bool,
    /// The names of the items they carry (`adventure_inventory`, not in the vault): what a
    /// gogobee key lock compares its `key_id` with.
    pub items: Vec<String>,
}

/// What the opt-in write-back reads of a gogobee character and writes again: its progress
/// and the hit points a level changes (gogobee's own level-up keeps them in step).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GogobeeProgress {
    /// `dnd_level`, `dnd_xp` (XP toward the next level, on gogobee's curve).
    pub level: i64,
    pub xp: i64,
    pub class: String,
    pub con: i64,
    pub hp_max: i64,
    pub hp_current: i64,
}
