//! The Matrix transport's own rows: the events it took (`matrix_event`: each handled at most
//! once, across restarts and re-joins) and each player's direct-message room with the bot
//! (`matrix_dm`: where private replies and notices go).

/// How long a handled event id is remembered: far longer than any homeserver replays a
/// room's history to a member that (re)joins it.
pub const EVENT_MEMORY_MS: i64 = 30 * 24 * 3_600_000;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use crate::db::{LegacyColumns, Tx};
    use rusqlite::Connection;

    fn tx(c: &Connection) -> Tx<'_> {
        Tx::new(c, LegacyColumns::default())
    }

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::db::open(&dir.path().join("z.db")).unwrap();
        crate::db::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    #[test]
    fn an_event_is_claimed_once() {
        let (_d, c) = db();
        assert!(tx(&c).claim_event("$a", "!r", 10).unwrap());
        assert!(!tx(&c).claim_event("$a", "!r", 11).unwrap());
        assert!(tx(&c).claim_event("$b", "!r", 12).unwrap());
        assert_eq!(tx(&c).prune_events(12).unwrap(), 1);
        // Forgotten after the memory: claimable again (the homeserver no longer replays it).
        assert!(tx(&c).claim_event("$a", "!r", 13).unwrap());
        assert!(!tx(&c).claim_event("$b", "!r", 13).unwrap());
    }

    #[test]
    fn dm_rooms_are_remembered_and_forgotten() {
        let (_d, c) = db();
        assert_eq!(tx(&c).dm_room("@a:x").unwrap(), None);
        tx(&c).set_dm_room("@a:x", "!one", 1).unwrap();
        tx(&c).set_dm_room("@a:x", "!two", 2).unwrap();
        assert_eq!(tx(&c).dm_room("@a:x").unwrap().as_deref(), Some("!two"));
        tx(&c).forget_dm_room("@a:x", "!one").unwrap();
        assert_eq!(tx(&c).dm_room("@a:x").unwrap().as_deref(), Some("!two"));
        tx(&c).forget_dm_room("@a:x", "!two").unwrap();
        assert_eq!(tx(&c).dm_room("@a:x").unwrap(), None);
    }
}
