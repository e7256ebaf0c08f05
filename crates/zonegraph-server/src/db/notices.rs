//! Notices: the `zone_notice` outbox of messages no command of the player asked for.

use anyhow::Result;
use rusqlite::{Connection, params};

/// A queued notice.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Notice {
    /// Its row, for [`return_notices`]; not part of the HTTP API's JSON.
    #[serde(skip)]
    pub id: i64,
    pub text: String,
    pub html: String,
    pub created_at_ms: i64,
}

/// Queues a notice for `user`.
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

/// Whether `user` has notices not delivered yet (a cheap read before taking the writer).
pub fn has_pending_notices(conn: &Connection, user: &str) -> Result<bool> {
    let mut st = conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM zone_notice WHERE user_id = ?1 AND delivered_at_ms IS NULL)",
    )?;
    Ok(st.query_row([user], |r| r.get(0))?)
}

/// Takes the undelivered notices of `user`, oldest first, marking them delivered.
pub fn take_notices(tx: &Connection, user: &str, now: i64) -> Result<Vec<Notice>> {
    let notices: Vec<(i64, Notice)> = {
        let mut st = tx.prepare_cached(
            "SELECT notice_id, text, html, created_at_ms FROM zone_notice
             WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY notice_id",
        )?;
        st.query_map([user], |r| {
            Ok((
                r.get(0)?,
                Notice {
                    id: r.get(0)?,
                    text: r.get(1)?,
                    html: r.get(2)?,
                    created_at_ms: r.get(3)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    if let Some(last) = notices.last() {
        tx.execute(
            "UPDATE zone_notice SET delivered_at_ms = ?3
             WHERE user_id = ?1 AND delivered_at_ms IS NULL AND notice_id <= ?2",
            params![user, last.0, now],
        )?;
    }
    Ok(notices.into_iter().map(|(_, n)| n).collect())
}

/// Puts notices taken by [`take_notices`] back in `user`'s queue (their send failed and may
/// succeed later); they keep their places, so the queue's order is unchanged.
pub fn return_notices(tx: &Connection, user: &str, ids: &[i64]) -> Result<()> {
    let mut st = tx.prepare_cached(
        "UPDATE zone_notice SET delivered_at_ms = NULL WHERE user_id = ?1 AND notice_id = ?2",
    )?;
    for id in ids {
        st.execute(params![user, id])?;
    }
    Ok(())
}
