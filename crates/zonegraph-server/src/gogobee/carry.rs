//! Carrying gogobee's players over: a first sheet made from gogobee's character
//! ([`FirstSheet`]), a carried character's progress written back to gogobee's table, and what
//! an operator is told about a database gogobee still shares.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use zonegraph_core::engine::Character;
use zonegraph_core::zone::Zone;

use crate::db;

/// Said at the start on a database that still has gogobee's linear run columns: what
/// zonegraph keeps readable for gogobee there, and what it cannot.
pub const GOGOBEE_SHARED: &str = "this database still has gogobee's linear run columns \
    (current_room, room_seq_json): zonegraph keeps current_room, total_rooms, rooms_traversed \
    and gogobee's times up to date beside its own columns, so gogobee still sees where each \
    run is; but a fork zonegraph offers is stored in zonegraph's shape, which gogobee reads as \
    no fork pending, and a fork gogobee offers or a linear run it starts is carried over only \
    when zonegraph starts again. Do not let gogobee serve zone commands from this database \
    while zonegraph does; `zonegraph migrate --purge-legacy` drops those columns once every \
    run is warm.";

/// Why `serve` refuses a database with gogobee's linear run columns unless told gogobee has
/// stopped serving zones from it (`--gogobee-stopped`): the two cannot share it.
pub fn gogobee_refused(path: &Path) -> String {
    format!(
        "{} still has gogobee's linear run columns (current_room, room_seq_json), so gogobee may \
         still serve zone commands from it, and the two bots cannot share it: a fork either one \
         offers is stored in a shape the other reads as no fork pending. Stop gogobee's zone \
         commands, then start again with --gogobee-stopped (gogobee's other games go on: \
         current_room, total_rooms, rooms_traversed and its times are kept up to date), or \
         retire those columns with `zonegraph migrate --db {} --zones DIR --purge-legacy`. \
         Nothing was changed.",
        path.display(),
        path.display()
    )
}

/// How a player's first sheet is made: carried over from gogobee's tables when the database
/// has the player there (gogobee's level and its progress toward the next, the scores they chose, and of the items they
/// carry those a served zone's key lock asks for; gogobee's tables are only read), else the
/// rules' starting sheet with `starting` scores.
#[derive(Clone, Debug)]
pub struct FirstSheet {
    starting: [i32; 6],
    key_ids: BTreeSet<String>,
}

impl FirstSheet {
    /// On `zones`: the keys their locks ask for are the items carried over as keys.
    pub fn new(starting: [i32; 6], zones: &[Zone]) -> FirstSheet {
        let key_ids = zones
            .iter()
            .flat_map(|z| z.graph.edge_weights())
            .filter_map(|e| match &e.lock {
                zonegraph_core::zone::Lock::KeyRequired { key_id } => {
                    Some(zonegraph_core::zone::normalize_key(key_id))
                }
                _ => None,
            })
            .collect();
        FirstSheet { starting, key_ids }
    }

    /// `user`'s first sheet.
    pub fn of(&self, tx: &mut db::Tx<'_>, user: &str) -> Result<Character> {
        let starting = Character::starting(self.starting);
        let Some(g) = tx.gogobee_character(user)? else {
            return Ok(starting);
        };
        match self.carried(&g) {
            Ok(c) => Ok(c),
            Err(why) => {
                tracing::warn!(%user, why, "gogobee's character is not carried over");
                Ok(starting)
            }
        }
    }

    /// gogobee's character as ours, or why it cannot be (a value out of the rules' range).
    fn carried(&self, g: &db::GogobeeCharacter) -> Result<Character, String> {
        let level = u32::try_from(g.level)
            .ok()
            .filter(|l| zonegraph_core::rules::LEVEL_RANGE.contains(l))
            .ok_or_else(|| format!("level {} is out of range", g.level))?;
        let toward = u32::try_from(g.xp).map_err(|_| format!("XP {} is out of range", g.xp))?;
        // gogobee counts XP toward the next level on its own curve: the same progress
        // through the level, in ours (`takeover`).
        let xp = crate::gogobee::takeover::xp_from_gogobee(level, toward)?;
        let mut c = Character::starting(self.starting);
        if g.set_up {
            for (i, &v) in g.scores.iter().enumerate() {
                c.scores[i] = i32::try_from(v)
                    .ok()
                    .filter(|s| zonegraph_core::rules::SCORE_RANGE.contains(s))
                    .ok_or_else(|| format!("score {v} is out of range"))?;
            }
        }
        c.level = level;
        c.xp = xp;
        c.keys = g
            .items
            .iter()
            .map(|i| zonegraph_core::zone::normalize_key(i))
            .filter(|k| self.key_ids.contains(k))
            .collect();
        Ok(c)
    }
}

/// The write-back: a carried character's new level or XP written to gogobee's row (see
/// [`crate::gogobee::takeover::written_back`]), in the command's transaction. A row gogobee changed
/// meanwhile is left as gogobee wrote it, and said.
pub fn write_back_gogobee(
    tx: &mut db::Tx<'_>,
    user: &str,
    before: &Character,
    after: &Character,
) -> Result<()> {
    if (after.level, after.xp) == (before.level, before.xp) {
        return Ok(());
    }
    let Some(old) = tx.gogobee_progress(user)? else {
        return Ok(());
    };
    let Some(new) = crate::gogobee::takeover::written_back(&old, after.level, after.xp) else {
        return Ok(());
    };
    if tx.put_gogobee_progress(user, &old, &new)? {
        tracing::info!(
            %user,
            level = new.level,
            xp = new.xp,
            "gogobee's character written back (XP toward the next level)"
        );
    } else {
        tracing::info!(%user, "gogobee's character changed meanwhile; not written back");
    }
    Ok(())
}
