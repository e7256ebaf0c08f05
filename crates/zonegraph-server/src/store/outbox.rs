//! The events outbox (`--events-url`): each command's events queued for the host game,
//! claimed by one instance, marked delivered, failed or given up, shed past its caps, and
//! pruned.

use std::sync::mpsc;

use anyhow::Result;

use super::sweep::KEEP_DELIVERED_NOTICES_MS;
use super::{Store, Wrote};
use crate::clock::now_ms;
use crate::db;

impl Store {
    /// At most `limit` events to send now, each claimed for this instance (see
    /// [`db::Tx::due_events`]): the oldest undelivered one of each player, oldest first.
    pub fn claim_due_events(&self, limit: i64) -> Result<Vec<db::OutEvent>> {
        let now = now_ms();
        let due = self.read(move |tx| tx.due_events(now, limit))?;
        let (sent, claimed) = mpsc::sync_channel(1);
        self.write(move |tx| {
            let mut mine = Vec::new();
            for e in due {
                if tx.claim_out_event(e.id, now)? {
                    mine.push(e);
                }
            }
            let count = mine.len();
            let _ = sent.send(mine);
            Ok(Wrote {
                applied: true,
                count,
            })
        })?;
        claimed
            .recv()
            .map_err(|_| anyhow::anyhow!("the database writer has stopped"))
    }

    /// Records how the delivery of event `id` went (see [`db::Tx::event_sent`]): delivered,
    /// tried again later, or given up.
    pub fn event_sent(&self, id: i64, sent: db::Sent) -> Result<()> {
        self.write(move |tx| {
            tx.event_sent(id, &sent, now_ms())?;
            Ok(Wrote {
                applied: true,
                count: 1,
            })
        })?;
        Ok(())
    }

    /// Events not delivered yet, and the most attempts any of them took.
    pub fn events_waiting(&self) -> Result<(i64, i64)> {
        self.read(|tx| tx.events_waiting())
    }

    /// With an events outbox (`--events-url`): the events waiting in it and how long ago the
    /// oldest of them was queued, in ms (0 when none waits). `None` without one.
    pub fn events_outbox(&self) -> Result<Option<(i64, i64)>> {
        if self.events_out.is_none() {
            return Ok(None);
        }
        let (waiting, oldest) = self.read(|tx| tx.events_outbox())?;
        let age = oldest.map_or(0, |at| now_ms().saturating_sub(at).max(0));
        Ok(Some((waiting, age)))
    }

    /// The newest `limit` events given up, newest first.
    pub fn dead_events(&self, limit: i64) -> Result<Vec<db::DeadEvent>> {
        self.read(|tx| tx.dead_events(limit))
    }

    /// How many events were given up at `after` < dead_at ≤ `until`, by cause.
    pub fn events_given_up(&self, after: i64, until: i64) -> Result<Vec<(db::DeadCause, i64)>> {
        self.read(|tx| tx.events_given_up(after, until))
    }

    /// Gives up the oldest undelivered events past the outbox's total cap; how many.
    pub fn shed_events_out(&self, now: i64) -> Result<u64> {
        let total = self.events_out.map_or(i64::MAX, |l| l.total);
        self.db
            .write(move |tx| tx.shed_over_total(total, now), |_| true)
    }

    /// Deletes the events delivered more than [`KEEP_DELIVERED_NOTICES_MS`] before `now`, and
    /// the dead letters older than the outbox keeps them.
    pub fn prune_events_out(&self, now: i64) -> Result<u64> {
        let keep_dead = self.events_out.unwrap_or_default().keep_dead;
        let delivered_before = now.saturating_sub(KEEP_DELIVERED_NOTICES_MS);
        let dead_before = now.saturating_sub(db::millis(keep_dead));
        self.db.write(
            move |tx| tx.prune_events_out(delivered_before, dead_before),
            |_| true,
        )
    }
}
