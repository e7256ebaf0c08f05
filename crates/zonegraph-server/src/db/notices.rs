//! Notices: the `zone_notice` outbox of messages no command of the player asked for. A
//! notice stays queued, in order, until its transport confirms delivery ([`ack_notices`]);
//! `delivered_at_ms` is that confirmation.

use anyhow::Result;
use rusqlite::{Connection, params};

/// The most notices queued for one player; past it the oldest are dropped, and the next
/// notice handed out counts them (`dropped_before`).
pub const MAX_QUEUED_NOTICES: i64 = 100;

/// A queued notice.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
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

/// Queues a notice for `user`; when that makes more than [`MAX_QUEUED_NOTICES`], the oldest
/// go, and the oldest one left carries their count.
pub fn push_notice(
    tx: &Connection,
    user: &str,
    run_id: &str,
    text: &str,
    html: &str,
    now: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO zone_notice (user_id, run_id, text, html, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![user, run_id, text, html, now])?;
    let queued: i64 = tx
        .prepare_cached(
            "SELECT count(*) FROM zone_notice WHERE user_id = ?1 AND delivered_at_ms IS NULL",
        )?
        .query_row([user], |r| r.get(0))?;
    let excess = queued - MAX_QUEUED_NOTICES;
    if excess <= 0 {
        return Ok(());
    }
    let dropped: Vec<(i64, i64)> = tx
        .prepare_cached(
            "SELECT notice_id, dropped_before FROM zone_notice
             WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY notice_id LIMIT ?2",
        )?
        .query_map(params![user, excess], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let count: i64 = dropped.iter().map(|(_, before)| 1 + before).sum();
    let mut delete = tx.prepare_cached("DELETE FROM zone_notice WHERE notice_id = ?1")?;
    for (id, _) in &dropped {
        delete.execute([id])?;
    }
    tx.prepare_cached(
        "UPDATE zone_notice SET dropped_before = dropped_before + ?2 WHERE notice_id =
           (SELECT min(notice_id) FROM zone_notice WHERE user_id = ?1 AND delivered_at_ms IS NULL)",
    )?
    .execute(params![user, count])?;
    Ok(())
}

/// Users with notices not delivered yet, sorted.
pub fn users_with_notices(conn: &Connection) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT user_id FROM zone_notice WHERE delivered_at_ms IS NULL ORDER BY user_id",
    )?;
    let rows = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Whether `user` has notices not delivered yet.
pub fn has_pending_notices(conn: &Connection, user: &str) -> Result<bool> {
    let mut st = conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM zone_notice WHERE user_id = ?1 AND delivered_at_ms IS NULL)",
    )?;
    Ok(st.query_row([user], |r| r.get(0))?)
}

/// The notices of `user` not delivered yet, oldest first. Reading changes nothing: they are
/// handed out again until acknowledged.
pub fn queued_notices(conn: &Connection, user: &str) -> Result<Vec<Notice>> {
    let mut st = conn.prepare_cached(
        "SELECT notice_id, text, html, created_at_ms, dropped_before FROM zone_notice
         WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY notice_id",
    )?;
    let rows = st
        .query_map([user], |r| {
            Ok(Notice {
                id: r.get(0)?,
                text: r.get(1)?,
                html: r.get(2)?,
                created_at_ms: r.get(3)?,
                dropped_before: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Marks `user`'s notices `ids` delivered (their transport confirmed them); ids of other
/// players or already delivered are ignored. Returns how many were marked.
pub fn ack_notices(tx: &Connection, user: &str, ids: &[i64], now: i64) -> Result<usize> {
    let mut st = tx.prepare_cached(
        "UPDATE zone_notice SET delivered_at_ms = ?3
         WHERE user_id = ?1 AND notice_id = ?2 AND delivered_at_ms IS NULL",
    )?;
    let mut n = 0;
    for id in ids {
        n += st.execute(params![user, id, now])?;
    }
    Ok(n)
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

    fn texts(conn: &Connection, user: &str) -> Vec<String> {
        queued_notices(conn, user)
            .unwrap()
            .into_iter()
            .map(|n| n.text)
            .collect()
    }

    #[test]
    fn notices_stay_queued_in_order_until_acknowledged() {
        let (_dir, conn) = db();
        for (i, t) in ["first", "second", "third"].iter().enumerate() {
            push_notice(&conn, "@p:test", "r1", t, t, i as i64).unwrap();
        }
        push_notice(&conn, "@other:test", "r2", "theirs", "theirs", 5).unwrap();
        let taken = queued_notices(&conn, "@p:test").unwrap();
        assert_eq!(texts(&conn, "@p:test"), ["first", "second", "third"]);
        // Handed out again: reading is not delivering.
        assert_eq!(queued_notices(&conn, "@p:test").unwrap(), taken);
        // Another player's ids are not theirs to acknowledge.
        let theirs = queued_notices(&conn, "@other:test").unwrap()[0].id;
        assert_eq!(ack_notices(&conn, "@p:test", &[theirs], 9).unwrap(), 0);
        assert_eq!(texts(&conn, "@other:test"), ["theirs"]);
        // The second was delivered (out of order is fine); twice counts once.
        let second = taken[1].id;
        assert_eq!(
            ack_notices(&conn, "@p:test", &[second, second], 10).unwrap(),
            1
        );
        assert_eq!(texts(&conn, "@p:test"), ["first", "third"]);
        let rest: Vec<i64> = queued_notices(&conn, "@p:test")
            .unwrap()
            .iter()
            .map(|n| n.id)
            .collect();
        assert_eq!(ack_notices(&conn, "@p:test", &rest, 11).unwrap(), 2);
        assert!(!has_pending_notices(&conn, "@p:test").unwrap());
        assert_eq!(users_with_notices(&conn).unwrap(), ["@other:test"]);
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_them() {
        let (_dir, conn) = db();
        let n = MAX_QUEUED_NOTICES + 3;
        for i in 0..n {
            let t = format!("n{i}");
            push_notice(&conn, "@p:test", "r1", &t, &t, i).unwrap();
        }
        let q = queued_notices(&conn, "@p:test").unwrap();
        assert_eq!(q.len() as i64, MAX_QUEUED_NOTICES);
        assert_eq!((q[0].text.as_str(), q[0].dropped_before), ("n3", 3));
        assert!(q[1..].iter().all(|n| n.dropped_before == 0));
        assert_eq!(q.last().unwrap().text, format!("n{}", n - 1));
        // Dropping a notice that carried a count passes the count on.
        push_notice(&conn, "@p:test", "r1", "more", "more", n).unwrap();
        let q = queued_notices(&conn, "@p:test").unwrap();
        assert_eq!((q[0].text.as_str(), q[0].dropped_before), ("n4", 4));
        // Acknowledged notices do not count against the queue.
        let ids: Vec<i64> = q.iter().map(|n| n.id).collect();
        ack_notices(&conn, "@p:test", &ids, n).unwrap();
        push_notice(&conn, "@p:test", "r1", "fresh", "fresh", n).unwrap();
        let q = queued_notices(&conn, "@p:test").unwrap();
        assert_eq!((q.len(), q[0].dropped_before), (1, 0));
    }
}
