//! The Matrix transport's own rows: the events it took (`matrix_event`: each handled at most
//! once, across restarts and re-joins) and each player's direct-message room with the bot
//! (`matrix_dm`: where private replies and notices go).

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension as _, params};

/// How long a handled event id is remembered: far longer than any homeserver replays a
/// room's history to a member that (re)joins it.
pub const EVENT_MEMORY_MS: i64 = 30 * 24 * 3_600_000;

/// Claims `event_id` for handling: `true` the first time, `false` when it was claimed before
/// (a replay after a restart or a re-join). Claimed before the command runs, so a crash in
/// between loses the command rather than running it twice.
pub fn claim_event(tx: &Connection, event_id: &str, room_id: &str, now: i64) -> Result<bool> {
    let added = tx
        .prepare_cached(
            "INSERT INTO matrix_event (event_id, room_id, handled_at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT(event_id) DO NOTHING",
        )?
        .execute(params![event_id, room_id, now])?;
    Ok(added == 1)
}

/// Forgets event ids handled before `before`; returns how many.
pub fn prune_events(tx: &Connection, before: i64) -> Result<usize> {
    Ok(tx
        .prepare_cached("DELETE FROM matrix_event WHERE handled_at_ms < ?1")?
        .execute([before])?)
}

/// The direct-message room known for `user`.
pub fn dm_room(conn: &Connection, user: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT room_id FROM matrix_dm WHERE user_id = ?1")?
        .query_row([user], |r| r.get(0))
        .optional()?)
}

/// Remembers `room` as `user`'s direct-message room.
pub fn set_dm_room(tx: &Connection, user: &str, room: &str, now: i64) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO matrix_dm (user_id, room_id, updated_at_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT(user_id) DO UPDATE SET room_id = excluded.room_id,
           updated_at_ms = excluded.updated_at_ms
         WHERE matrix_dm.room_id != excluded.room_id",
    )?
    .execute(params![user, room, now])?;
    Ok(())
}

/// Forgets `room` as `user`'s direct-message room (the bot left it or was removed).
pub fn forget_dm_room(tx: &Connection, user: &str, room: &str) -> Result<()> {
    tx.prepare_cached("DELETE FROM matrix_dm WHERE user_id = ?1 AND room_id = ?2")?
        .execute(params![user, room])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::db::open(&dir.path().join("z.db")).unwrap();
        crate::db::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    #[test]
    fn an_event_is_claimed_once() {
        let (_d, c) = db();
        assert!(claim_event(&c, "$a", "!r", 10).unwrap());
        assert!(!claim_event(&c, "$a", "!r", 11).unwrap());
        assert!(claim_event(&c, "$b", "!r", 12).unwrap());
        assert_eq!(prune_events(&c, 12).unwrap(), 1);
        // Forgotten after the memory: claimable again (the homeserver no longer replays it).
        assert!(claim_event(&c, "$a", "!r", 13).unwrap());
        assert!(!claim_event(&c, "$b", "!r", 13).unwrap());
    }

    #[test]
    fn dm_rooms_are_remembered_and_forgotten() {
        let (_d, c) = db();
        assert_eq!(dm_room(&c, "@a:x").unwrap(), None);
        set_dm_room(&c, "@a:x", "!one", 1).unwrap();
        set_dm_room(&c, "@a:x", "!two", 2).unwrap();
        assert_eq!(dm_room(&c, "@a:x").unwrap().as_deref(), Some("!two"));
        forget_dm_room(&c, "@a:x", "!one").unwrap();
        assert_eq!(dm_room(&c, "@a:x").unwrap().as_deref(), Some("!two"));
        forget_dm_room(&c, "@a:x", "!two").unwrap();
        assert_eq!(dm_room(&c, "@a:x").unwrap(), None);
    }
}
