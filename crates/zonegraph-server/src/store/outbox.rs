//! The events outbox (`--events-url`): each command's events queued for the host game,
//! claimed by one instance, marked delivered or failed, and pruned.

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

    /// Records how the delivery of event `id` went: delivered, or failed and tried again at
    /// `retry_at` with the reason kept.
    pub fn event_sent(&self, id: i64, outcome: Result<(), (i64, String)>) -> Result<()> {
        self.write(move |tx| {
            match &outcome {
                Ok(()) => tx.event_delivered(id, now_ms())?,
                Err((retry_at, why)) => tx.event_failed(id, *retry_at, why)?,
            }
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

    /// Deletes the events delivered more than [`KEEP_DELIVERED_NOTICES_MS`] before `now`.
    pub fn prune_events_out(&self, now: i64) -> Result<u64> {
        let before = now.saturating_sub(KEEP_DELIVERED_NOTICES_MS);
        self.db
            .write(move |tx| tx.prune_delivered_events(before), |_| true)
    }
}
