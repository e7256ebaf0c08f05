//! Notices: the `zone_notice` outbox of messages no command of the player asked for. A
//! notice stays queued, in order, until its transport confirms delivery (`Tx::ack_notices`);
//! `delivered_at_ms` is that confirmation.

/// The most notices queued for one player; past it the oldest are dropped, and the next
/// notice handed out counts them (`dropped_before`).
pub const MAX_QUEUED_NOTICES: i64 = 100;

/// A queued notice.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Notice {
    /// Its row: what a transport acknowledges.
    pub id: i64,
    pub text: String,
    pub html: String,
    pub created_at_ms: i64,
    /// Older notices dropped from a full queue before this one (worded by the store).
    #[serde(skip)]
    pub dropped_before: i64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
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

    fn texts(conn: &Connection, user: &str) -> Vec<String> {
        tx(conn)
            .queued_notices(user)
            .unwrap()
            .into_iter()
            .map(|n| n.text)
            .collect()
    }

    #[test]
    fn notices_stay_queued_in_order_until_acknowledged() {
        let (_dir, conn) = db();
        for (i, t) in ["first", "second", "third"].iter().enumerate() {
            tx(&conn)
                .push_notice("@p:test", "r1", t, t, i as i64)
                .unwrap();
        }
        tx(&conn)
            .push_notice("@other:test", "r2", "theirs", "theirs", 5)
            .unwrap();
        let taken = tx(&conn).queued_notices("@p:test").unwrap();
        assert_eq!(texts(&conn, "@p:test"), ["first", "second", "third"]);
        // Handed out again: reading is not delivering.
        assert_eq!(tx(&conn).queued_notices("@p:test").unwrap(), taken);
        // Another player's ids are not theirs to acknowledge.
        let theirs = tx(&conn).queued_notices("@other:test").unwrap()[0].id;
        assert_eq!(tx(&conn).ack_notices("@p:test", &[theirs], 9).unwrap(), 0);
        assert_eq!(texts(&conn, "@other:test"), ["theirs"]);
        // The second was delivered (out of order is fine); twice counts once.
        let second = taken[1].id;
        assert_eq!(
            tx(&conn)
                .ack_notices("@p:test", &[second, second], 10)
                .unwrap(),
            1
        );
        assert_eq!(texts(&conn, "@p:test"), ["first", "third"]);
        let rest: Vec<i64> = tx(&conn)
            .queued_notices("@p:test")
            .unwrap()
            .iter()
            .map(|n| n.id)
            .collect();
        assert_eq!(tx(&conn).ack_notices("@p:test", &rest, 11).unwrap(), 2);
        assert!(tx(&conn).queued_notices("@p:test").unwrap().is_empty());
        assert_eq!(tx(&conn).users_with_notices().unwrap(), ["@other:test"]);
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_them() {
        let (_dir, conn) = db();
        let n = MAX_QUEUED_NOTICES + 3;
        for i in 0..n {
            let t = format!("n{i}");
            tx(&conn).push_notice("@p:test", "r1", &t, &t, i).unwrap();
        }
        let q = tx(&conn).queued_notices("@p:test").unwrap();
        assert_eq!(q.len() as i64, MAX_QUEUED_NOTICES);
        assert_eq!((q[0].text.as_str(), q[0].dropped_before), ("n3", 3));
        assert!(q[1..].iter().all(|n| n.dropped_before == 0));
        assert_eq!(q.last().unwrap().text, format!("n{}", n - 1));
        // Dropping a notice that carried a count passes the count on.
        tx(&conn)
            .push_notice("@p:test", "r1", "more", "more", n)
            .unwrap();
        let q = tx(&conn).queued_notices("@p:test").unwrap();
        assert_eq!((q[0].text.as_str(), q[0].dropped_before), ("n4", 4));
        // Acknowledged notices do not count against the queue.
        let ids: Vec<i64> = q.iter().map(|n| n.id).collect();
        tx(&conn).ack_notices("@p:test", &ids, n).unwrap();
        tx(&conn)
            .push_notice("@p:test", "r1", "fresh", "fresh", n)
            .unwrap();
        let q = tx(&conn).queued_notices("@p:test").unwrap();
        assert_eq!((q.len(), q[0].dropped_before), (1, 0));
    }
}
