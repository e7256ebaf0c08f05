//! The events outbox, `zone_event_out` (`serve --events-url`): the typed events of each
//! committed command, written in that command's transaction, so an event goes out exactly
//! when its change is kept, and never for a change that was not. A player's events leave in
//! `event_id` order, one at a time: only the oldest undelivered event of a player is ever
//! handed out ([`Tx::due_events`]). An instance claims an event before it sends it
//! ([`Tx::claim_out_event`]), so two instances on one PostgreSQL do not send it together.
//!
//! The outbox sheds: an event given up moves, in one transaction, to the dead letters
//! (`zone_event_dead`) with its [`DeadCause`] and last error, and the player's next event
//! is the oldest again. [`OutboxLimits`] says how much is kept and for how long; the queue
//! of one player past its cap sheds in the command that overfills it
//! ([`Tx::push_events`]), the whole outbox past its cap when the sender trims it
//! ([`Tx::shed_over_total`]).

use std::time::Duration;

use anyhow::{Result, bail};

use super::Tx;
use super::sql::{Row, vals};

/// How long a claim holds: longer than a delivery may take, so an instance that died while
/// sending leaves the event to the others after this.
pub const EVENT_CLAIM_MS: i64 = 30_000;

/// How much the outbox keeps, and for how long; past these an event is given up (moved to
/// the dead letters). The defaults are what `serve --events-url` runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutboxLimits {
    /// Failed deliveries after which an event the receiver refuses (it answered, and not
    /// with "later") is given up: 20 tries take about an hour (the sender's backoff).
    pub max_attempts: i64,
    /// How long an event may keep failing, whatever the failure: its first failure after
    /// this age gives it up. A receiver that is down for less loses nothing.
    pub max_age: Duration,
    /// Undelivered events one player may have; past it their oldest are given up.
    pub per_player: i64,
    /// Undelivered events in all; past it the oldest are given up.
    pub total: i64,
    /// How long a dead letter is kept.
    pub keep_dead: Duration,
}

impl Default for OutboxLimits {
    fn default() -> OutboxLimits {
        OutboxLimits {
            max_attempts: 20,
            max_age: Duration::from_secs(3 * 24 * 3600),
            per_player: 1_000,
            total: 100_000,
            keep_dead: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

/// A duration in the database's milliseconds.
pub fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// An event waiting for the host game's endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutEvent {
    /// Its row: the event's id, increasing per player in the order the events happened.
    pub id: i64,
    pub user: String,
    pub zone_id: String,
    /// The run's link token (its page and `GET /api/runs/{token}`); empty without a run.
    pub run_token: String,
    /// The core's typed event, as JSON.
    pub event_json: String,
    pub created_at_ms: i64,
    /// Failed deliveries so far.
    pub attempts: i64,
}

/// Why an event was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeadCause {
    /// The receiver refused it [`OutboxLimits::max_attempts`] times.
    Refused,
    /// It was still failing past [`OutboxLimits::max_age`].
    TooOld,
    /// Its player had more undelivered events than [`OutboxLimits::per_player`].
    PlayerCap,
    /// The outbox had more undelivered events than [`OutboxLimits::total`].
    TotalCap,
}

impl DeadCause {
    const ALL: [DeadCause; 4] = [
        DeadCause::Refused,
        DeadCause::TooOld,
        DeadCause::PlayerCap,
        DeadCause::TotalCap,
    ];

    /// As the `cause` column keeps it.
    pub fn code(self) -> &'static str {
        match self {
            DeadCause::Refused => "refused",
            DeadCause::TooOld => "too_old",
            DeadCause::PlayerCap => "player_cap",
            DeadCause::TotalCap => "total_cap",
        }
    }

    fn of_code(code: &str) -> Result<DeadCause> {
        match DeadCause::ALL.into_iter().find(|c| c.code() == code) {
            Some(c) => Ok(c),
            None => bail!("a dead letter's cause {code:?} is none this zonegraph knows"),
        }
    }
}

/// For an operator: `refused`, `too old`, `shed over the per-player cap`, …
impl std::fmt::Display for DeadCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeadCause::Refused => "refused",
            DeadCause::TooOld => "too old",
            DeadCause::PlayerCap => "shed over the per-player cap",
            DeadCause::TotalCap => "shed over the total cap",
        })
    }
}

/// An event given up: the outbox's row as it was, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadEvent {
    pub event: OutEvent,
    pub cause: DeadCause,
    /// The last delivery's error; empty when it was never tried.
    pub last_error: String,
    pub dead_at_ms: i64,
}

/// How one delivery of an event ended, as the outbox records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sent {
    /// The endpoint took it.
    Delivered,
    /// It failed and is tried again from `at`.
    Retry { at: i64, error: String },
    /// It failed and is given up.
    Dead { cause: DeadCause, error: String },
}

/// The oldest undelivered event of each player, found through the queue index without
/// reading every undelivered row: the players are walked one index seek at a time (the
/// next user id after the last), then each one's oldest event is one more seek.
const DUE_SQL: &str = "WITH RECURSIVE waiting(user_id) AS (
     SELECT min(user_id) FROM zone_event_out WHERE delivered_at_ms IS NULL
     UNION ALL
     SELECT (SELECT min(o.user_id) FROM zone_event_out o
             WHERE o.delivered_at_ms IS NULL AND o.user_id > w.user_id)
     FROM waiting w WHERE w.user_id IS NOT NULL
 )
 SELECT e.event_id, e.user_id, e.zone_id, e.run_token, e.event_json,
        e.created_at_ms, e.attempts
 FROM waiting w
 JOIN zone_event_out e ON e.event_id =
     (SELECT min(f.event_id) FROM zone_event_out f
      WHERE f.user_id = w.user_id AND f.delivered_at_ms IS NULL)
 WHERE e.next_at_ms <= ?1 AND e.claimed_until_ms <= ?1
 ORDER BY e.event_id LIMIT ?2";

/// The newest of a player's undelivered events past the newest `?2` (`?1`'s queue over its
/// cap ends there), read backwards through the queue index.
const PLAYER_PAST_CAP_SQL: &str = "SELECT event_id FROM zone_event_out
     WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY event_id DESC LIMIT 1 OFFSET ?2";

/// The newest undelivered event past the newest `?1` of them all, read backwards through
/// `idx_zone_event_out_waiting` (the delivered events are not read).
const TOTAL_PAST_CAP_SQL: &str = "SELECT event_id FROM zone_event_out
     WHERE delivered_at_ms IS NULL ORDER BY event_id DESC LIMIT 1 OFFSET ?1";

/// Which undelivered events move to the dead letters together.
#[derive(Clone, Copy, Debug)]
enum Burial<'a> {
    /// One event.
    One(i64),
    /// A player's events up to this id.
    PlayerThrough(&'a str, i64),
    /// Everyone's events up to this id.
    AllThrough(i64),
}

impl Burial<'_> {
    /// Its `WHERE` clause, its placeholders numbered from `?{from}`, and their values.
    fn filter(self, from: usize) -> (String, Vec<super::Value>) {
        let (sql, values) = match self {
            Burial::One(id) => (format!("event_id = ?{from}"), vals![id].to_vec()),
            Burial::PlayerThrough(user, id) => (
                format!("event_id <= ?{from} AND user_id = ?{}", from + 1),
                vals![id, user].to_vec(),
            ),
            Burial::AllThrough(id) => (format!("event_id <= ?{from}"), vals![id].to_vec()),
        };
        (format!("{sql} AND delivered_at_ms IS NULL"), values)
    }
}

fn out_event(r: &Row) -> Result<OutEvent> {
    Ok(OutEvent {
        id: r.int(0)?,
        user: r.text(1)?,
        zone_id: r.text(2)?,
        run_token: r.text(3)?,
        event_json: r.text(4)?,
        created_at_ms: r.int(5)?,
        attempts: r.int(6)?,
    })
}

impl Tx<'_> {
    /// Queues `events` (JSON) of `user` for delivery, in order; past `per_player` undelivered
    /// events of theirs, their oldest are given up ([`DeadCause::PlayerCap`]). How many were.
    pub fn push_events(
        &mut self,
        user: &str,
        zone_id: &str,
        run_token: &str,
        events: &[String],
        per_player: i64,
        now: i64,
    ) -> Result<u64> {
        for e in events {
            self.conn.execute(
                "INSERT INTO zone_event_out
                   (user_id, zone_id, run_token, event_json, created_at_ms, next_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                &vals![user, zone_id, run_token, e.as_str(), now],
            )?;
        }
        if events.is_empty() {
            return Ok(0);
        }
        let Some(last) = self.first_int(PLAYER_PAST_CAP_SQL, &vals![user, per_player.max(1)])?
        else {
            return Ok(0);
        };
        self.bury(Burial::PlayerThrough(user, last), DeadCause::PlayerCap, now)
    }

    /// At most `limit` events to send now: the oldest undelivered event of each player whose
    /// retry time has come and that no instance holds, oldest first.
    pub fn due_events(&mut self, now: i64, limit: i64) -> Result<Vec<OutEvent>> {
        self.conn
            .query(DUE_SQL, &vals![now, limit])?
            .iter()
            .map(out_event)
            .collect()
    }

    /// Claims event `id` for this instance until `now` + [`EVENT_CLAIM_MS`]; false when
    /// another instance holds it or it went already.
    pub fn claim_out_event(&mut self, id: i64, now: i64) -> Result<bool> {
        let n = self.conn.execute(
            "UPDATE zone_event_out SET claimed_until_ms = ?2
             WHERE event_id = ?1 AND delivered_at_ms IS NULL AND claimed_until_ms <= ?3",
            &vals![id, now + EVENT_CLAIM_MS, now],
        )?;
        Ok(n == 1)
    }

    /// Records how the delivery of event `id` went at `now`. One given up leaves the outbox
    /// in this transaction, so its player's next event is the oldest from now on.
    pub fn event_sent(&mut self, id: i64, sent: &Sent, now: i64) -> Result<()> {
        match sent {
            Sent::Delivered => {
                self.conn.execute(
                    "UPDATE zone_event_out
                     SET delivered_at_ms = ?2, claimed_until_ms = 0, last_error = ''
                     WHERE event_id = ?1",
                    &vals![id, now],
                )?;
            }
            Sent::Retry { at, error } => self.event_failed(id, *at, error)?,
            Sent::Dead { cause, error } => {
                self.event_failed(id, now, error)?;
                self.bury(Burial::One(id), *cause, now)?;
            }
        }
        Ok(())
    }

    /// Event `id` did not reach the endpoint: tried again from `next_at`.
    fn event_failed(&mut self, id: i64, next_at: i64, error: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE zone_event_out
             SET attempts = attempts + 1, next_at_ms = ?2, claimed_until_ms = 0, last_error = ?3
             WHERE event_id = ?1",
            &vals![id, next_at, error],
        )?;
        Ok(())
    }

    /// Moves the undelivered events of `burial` to the dead letters, `cause` their cause;
    /// how many moved.
    fn bury(&mut self, burial: Burial<'_>, cause: DeadCause, now: i64) -> Result<u64> {
        let (filter, mut values) = burial.filter(3);
        let mut insert = vals![cause.code(), now].to_vec();
        insert.append(&mut values);
        // The casts type the values for PostgreSQL, which reads a bare placeholder in a
        // select list as text.
        self.conn.execute(
            &format!(
                "INSERT INTO zone_event_dead
                   (event_id, user_id, zone_id, run_token, event_json, created_at_ms, attempts,
                    cause, last_error, dead_at_ms)
                 SELECT event_id, user_id, zone_id, run_token, event_json, created_at_ms,
                        attempts, CAST(?1 AS TEXT), last_error, CAST(?2 AS BIGINT)
                 FROM zone_event_out WHERE {filter}"
            ),
            &insert,
        )?;
        let (filter, values) = burial.filter(1);
        self.conn.execute(
            &format!("DELETE FROM zone_event_out WHERE {filter}"),
            &values,
        )
    }

    /// Gives up the oldest undelivered events past `total` ([`DeadCause::TotalCap`]); how
    /// many.
    pub fn shed_over_total(&mut self, total: i64, now: i64) -> Result<u64> {
        match self.first_int(TOTAL_PAST_CAP_SQL, &vals![total.max(1)])? {
            Some(last) => self.bury(Burial::AllThrough(last), DeadCause::TotalCap, now),
            None => Ok(0),
        }
    }

    /// The first column of the first row `sql` gives, if any.
    fn first_int(&mut self, sql: &str, params: &[super::Value]) -> Result<Option<i64>> {
        self.conn
            .query(sql, params)?
            .first()
            .map(|r| r.int(0))
            .transpose()
    }

    /// Events not delivered yet, and the attempts of the oldest (what an operator asks when
    /// the host game is down).
    pub fn events_waiting(&mut self) -> Result<(i64, i64)> {
        let r = self.conn.query(
            "SELECT count(*), coalesce(max(attempts), 0) FROM zone_event_out
             WHERE delivered_at_ms IS NULL",
            &[],
        )?;
        let r = r
            .first()
            .ok_or_else(|| anyhow::anyhow!("a count gave no row"))?;
        Ok((r.int(0)?, r.int(1)?))
    }

    /// Events not delivered yet, and when the first of them still waiting was queued (the
    /// metrics' outbox depth and age): read through the index of the waiting events.
    pub fn events_outbox(&mut self) -> Result<(i64, Option<i64>)> {
        let waiting = self
            .first_int(
                "SELECT count(*) FROM zone_event_out WHERE delivered_at_ms IS NULL",
                &[],
            )?
            .unwrap_or(0);
        let oldest = self.first_int(
            "SELECT created_at_ms FROM zone_event_out WHERE delivered_at_ms IS NULL
             ORDER BY event_id LIMIT 1",
            &[],
        )?;
        Ok((waiting, oldest))
    }

    /// The newest `limit` dead letters, newest first.
    pub fn dead_events(&mut self, limit: i64) -> Result<Vec<DeadEvent>> {
        self.conn
            .query(
                "SELECT event_id, user_id, zone_id, run_token, event_json, created_at_ms,
                        attempts, cause, last_error, dead_at_ms
                 FROM zone_event_dead ORDER BY dead_at_ms DESC, event_id DESC LIMIT ?1",
                &vals![limit],
            )?
            .iter()
            .map(|r| {
                Ok(DeadEvent {
                    event: out_event(r)?,
                    cause: DeadCause::of_code(&r.text(7)?)?,
                    last_error: r.text(8)?,
                    dead_at_ms: r.int(9)?,
                })
            })
            .collect()
    }

    /// How many dead letters there are.
    pub fn dead_event_count(&mut self) -> Result<i64> {
        Ok(self
            .first_int("SELECT count(*) FROM zone_event_dead", &[])?
            .unwrap_or(0))
    }

    /// How many events were given up at `after` < dead_at ≤ `until`, by cause.
    pub fn events_given_up(&mut self, after: i64, until: i64) -> Result<Vec<(DeadCause, i64)>> {
        self.conn
            .query(
                "SELECT cause, count(*) FROM zone_event_dead
                 WHERE dead_at_ms > ?1 AND dead_at_ms <= ?2 GROUP BY cause ORDER BY cause",
                &vals![after, until],
            )?
            .iter()
            .map(|r| Ok((DeadCause::of_code(&r.text(0)?)?, r.int(1)?)))
            .collect()
    }

    /// Deletes the events delivered before `delivered_before` and the dead letters given up
    /// before `dead_before`; how many went.
    pub fn prune_events_out(&mut self, delivered_before: i64, dead_before: i64) -> Result<u64> {
        let delivered = self.conn.execute(
            "DELETE FROM zone_event_out WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < ?1",
            &vals![delivered_before],
        )?;
        let dead = self.conn.execute(
            "DELETE FROM zone_event_dead WHERE dead_at_ms < ?1",
            &vals![dead_before],
        )?;
        Ok(delivered + dead)
    }
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

    fn push(conn: &Connection, user: &str, events: &[&str], cap: i64, now: i64) -> u64 {
        let events: Vec<String> = events
            .iter()
            .map(|e| format!("{{\"e\":\"{e}\"}}"))
            .collect();
        tx(conn)
            .push_events(user, "z", "", &events, cap, now)
            .unwrap()
    }

    /// Each due event as `user:event`.
    fn due(conn: &Connection, now: i64) -> Vec<String> {
        tx(conn)
            .due_events(now, 64)
            .unwrap()
            .iter()
            .map(|e| format!("{}:{}", e.user, &e.event_json[6..e.event_json.len() - 2]))
            .collect()
    }

    fn dead(conn: &Connection) -> Vec<(String, DeadCause)> {
        let mut d: Vec<_> = tx(conn)
            .dead_events(100)
            .unwrap()
            .into_iter()
            .map(|d| {
                let e = &d.event.event_json;
                (format!("{}:{}", d.event.user, &e[6..e.len() - 2]), d.cause)
            })
            .collect();
        d.sort();
        d
    }

    #[test]
    fn each_players_oldest_event_is_due_and_one_given_up_lets_the_next_go() {
        let (_dir, conn) = db();
        push(&conn, "b", &["b1", "b2"], 100, 1);
        push(&conn, "a", &["a1", "a2", "a3"], 100, 2);
        assert_eq!(due(&conn, 10), ["b:b1", "a:a1"]);
        let a1 = tx(&conn).due_events(10, 64).unwrap()[1].id;
        let b1 = tx(&conn).due_events(10, 64).unwrap()[0].id;
        // b1 went; a1 failed and waits until 20, holding a2 back.
        tx(&conn).event_sent(b1, &Sent::Delivered, 10).unwrap();
        let retry = Sent::Retry {
            at: 20,
            error: "500".into(),
        };
        tx(&conn).event_sent(a1, &retry, 10).unwrap();
        assert_eq!(due(&conn, 11), ["b:b2"]);
        // A claimed event is not handed out again.
        let b2 = tx(&conn).due_events(11, 64).unwrap()[0].id;
        assert!(tx(&conn).claim_out_event(b2, 11).unwrap());
        assert!(due(&conn, 12).is_empty());
        // a1 given up: a2 is a's oldest at once, and a1 keeps its last error.
        let refused = Sent::Dead {
            cause: DeadCause::Refused,
            error: "400".into(),
        };
        tx(&conn).event_sent(a1, &refused, 13).unwrap();
        assert_eq!(due(&conn, 13), ["a:a2"]);
        let d = tx(&conn).dead_events(10).unwrap();
        assert_eq!(
            (d[0].event.id, d[0].event.attempts, d[0].last_error.as_str()),
            (a1, 2, "400")
        );
        assert_eq!(tx(&conn).dead_event_count().unwrap(), 1);
        assert_eq!(
            tx(&conn).events_given_up(12, 13).unwrap(),
            [(DeadCause::Refused, 1)]
        );
        assert!(tx(&conn).events_given_up(13, 20).unwrap().is_empty());
        // Giving up what went already moves nothing.
        tx(&conn).event_sent(a1, &refused, 14).unwrap();
        assert_eq!(tx(&conn).dead_event_count().unwrap(), 1);
    }

    #[test]
    fn a_queue_over_its_cap_sheds_its_oldest_and_the_outbox_over_the_total_too() {
        let (_dir, conn) = db();
        assert_eq!(push(&conn, "a", &["a1", "a2", "a3"], 3, 1), 0);
        assert_eq!(push(&conn, "a", &["a4", "a5"], 3, 2), 2);
        assert_eq!(push(&conn, "b", &["b1", "b2"], 3, 3), 0);
        assert_eq!(due(&conn, 10), ["a:a3", "b:b1"]);
        assert_eq!(
            dead(&conn),
            [
                ("a:a1".into(), DeadCause::PlayerCap),
                ("a:a2".into(), DeadCause::PlayerCap)
            ]
        );
        // Delivered events do not count against a cap.
        let a3 = tx(&conn).due_events(10, 64).unwrap()[0].id;
        tx(&conn).event_sent(a3, &Sent::Delivered, 10).unwrap();
        assert_eq!(push(&conn, "a", &["a6"], 3, 11), 0);
        // Five waiting (a4 a5 a6 b1 b2): over a total of 3, the two oldest go.
        assert_eq!(tx(&conn).shed_over_total(3, 12).unwrap(), 2);
        assert_eq!(tx(&conn).shed_over_total(3, 12).unwrap(), 0);
        assert_eq!(due(&conn, 20), ["b:b1", "a:a6"]);
        assert_eq!(tx(&conn).events_waiting().unwrap(), (3, 0));
        assert!(dead(&conn).contains(&("a:a5".into(), DeadCause::TotalCap)));
        // Kept for a while, then pruned with the delivered events.
        assert_eq!(tx(&conn).prune_events_out(11, 12).unwrap(), 1 + 2);
        assert_eq!(tx(&conn).prune_events_out(11, 13).unwrap(), 2);
        assert_eq!(tx(&conn).dead_event_count().unwrap(), 0);
    }

    /// The plan SQLite makes for a statement, one line per step.
    fn plan(conn: &Connection, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Vec<String> {
        let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        st.query_map(params, |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn a_round_and_the_total_cap_read_the_outbox_through_its_indexes() {
        let (_dir, conn) = db();
        let due = plan(&conn, DUE_SQL, &[&0, &64]);
        // Only the players found are scanned; every read of the outbox is a seek in the
        // queue index or by event id.
        for step in &due {
            if step.starts_with("SCAN") {
                assert_eq!(step, "SCAN w", "{due:?}");
            }
            if step.starts_with("SEARCH") {
                assert!(
                    step.contains("USING INDEX idx_zone_event_out_queue")
                        || step.contains("USING COVERING INDEX idx_zone_event_out_queue")
                        || step.contains("USING INTEGER PRIMARY KEY"),
                    "{due:?}"
                );
            }
        }
        let total = plan(&conn, TOTAL_PAST_CAP_SQL, &[&10]);
        assert!(
            total
                .iter()
                .all(|s| s.contains("idx_zone_event_out_waiting")),
            "{total:?}"
        );
        let player = plan(&conn, PLAYER_PAST_CAP_SQL, &[&"a", &10]);
        assert!(
            player
                .iter()
                .all(|s| s.contains("idx_zone_event_out_queue")),
            "{player:?}"
        );
    }
}
