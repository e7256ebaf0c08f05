//! The events outbox, `zone_event_out` (`serve --events-url`): the typed events of each
//! committed command, written in that command's transaction, so an event goes out exactly
//! when its change is kept, and never for a change that was not. A player's events leave in
//! `event_id` order, one at a time: only the oldest undelivered event of a player is ever
//! handed out ([`Tx::due_events`]). An instance claims an event before it sends it
//! ([`Tx::claim_out_event`]), so two instances on one PostgreSQL do not send it together.

use anyhow::Result;

use super::Tx;
use super::sql::vals;

/// How long a claim holds: longer than a delivery may take, so an instance that died while
/// sending leaves the event to the others after this.
pub const EVENT_CLAIM_MS: i64 = 30_000;

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

impl Tx<'_> {
    /// Queues `events` (JSON) of `user` for delivery, in order.
    pub fn push_events(
        &mut self,
        user: &str,
        zone_id: &str,
        run_token: &str,
        events: &[String],
        now: i64,
    ) -> Result<()> {
        for e in events {
            self.conn.execute(
                "INSERT INTO zone_event_out
                   (user_id, zone_id, run_token, event_json, created_at_ms, next_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                &vals![user, zone_id, run_token, e.as_str(), now],
            )?;
        }
        Ok(())
    }

    /// At most `limit` events to send now: the oldest undelivered event of each player whose
    /// retry time has come and that no instance holds, oldest first.
    pub fn due_events(&mut self, now: i64, limit: i64) -> Result<Vec<OutEvent>> {
        let rows = self.conn.query(
            "SELECT e.event_id, e.user_id, e.zone_id, e.run_token, e.event_json,
                    e.created_at_ms, e.attempts
             FROM zone_event_out e
             WHERE e.delivered_at_ms IS NULL AND e.next_at_ms <= ?1
               AND e.claimed_until_ms <= ?1
               AND e.event_id = (SELECT min(f.event_id) FROM zone_event_out f
                                 WHERE f.user_id = e.user_id AND f.delivered_at_ms IS NULL)
             ORDER BY e.event_id LIMIT ?2",
            &vals![now, limit],
        )?;
        rows.iter()
            .map(|r| {
                Ok(OutEvent {
                    id: r.int(0)?,
                    user: r.text(1)?,
                    zone_id: r.text(2)?,
                    run_token: r.text(3)?,
                    event_json: r.text(4)?,
                    created_at_ms: r.int(5)?,
                    attempts: r.int(6)?,
                })
            })
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

    /// Event `id` reached the endpoint.
    pub fn event_delivered(&mut self, id: i64, now: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE zone_event_out SET delivered_at_ms = ?2, claimed_until_ms = 0, last_error = ''
             WHERE event_id = ?1",
            &vals![id, now],
        )?;
        Ok(())
    }

    /// Event `id` did not reach the endpoint: tried again from `next_at`.
    pub fn event_failed(&mut self, id: i64, next_at: i64, error: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE zone_event_out
             SET attempts = attempts + 1, next_at_ms = ?2, claimed_until_ms = 0, last_error = ?3
             WHERE event_id = ?1",
            &vals![id, next_at, error],
        )?;
        Ok(())
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

    /// Deletes the events delivered before `before`; how many went.
    pub fn prune_delivered_events(&mut self, before: i64) -> Result<u64> {
        self.conn.execute(
            "DELETE FROM zone_event_out WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < ?1",
            &vals![before],
        )
    }
}
