//! What the Matrix transport keeps in the database: the chat events claimed, the players'
//! direct-message rooms, and the right to run the sync for a bot account.

use anyhow::Result;

use super::{Store, SyncLock, Wrote};
use crate::clock::now_ms;
use crate::db;

impl Store {
    /// Claims a chat event for handling: `true` once per event id (see
    /// [`db::claim_event`]); old claims are forgotten after [`db::EVENT_MEMORY_MS`].
    pub fn claim_event(&self, event_id: &str, room_id: &str) -> Result<bool> {
        let (e, r) = (event_id.to_string(), room_id.to_string());
        let wrote = self.write(move |tx| {
            let now = now_ms();
            let claimed = tx.claim_event(&e, &r, now)?;
            Ok(Wrote {
                applied: claimed,
                count: 0,
            })
        })?;
        Ok(wrote.applied)
    }

    /// Forgets event claims older than [`db::EVENT_MEMORY_MS`]; returns how many.
    pub fn prune_events(&self) -> Result<usize> {
        let wrote = self.write(|tx| {
            Ok(Wrote {
                applied: true,
                count: tx.prune_events(now_ms() - db::EVENT_MEMORY_MS)?,
            })
        })?;
        Ok(wrote.count)
    }

    /// `user`'s direct-message room on Matrix, if known.
    pub fn dm_room(&self, user: &str) -> Result<Option<String>> {
        self.read(|c| c.dm_room(user))
    }

    /// Remembers (`Some`) or forgets (`None`: forget `room`) `user`'s direct-message room.
    pub fn set_dm_room(&self, user: &str, room: &str, known: bool) -> Result<()> {
        let (u, r) = (user.to_string(), room.to_string());
        self.write(move |tx| {
            if known {
                tx.set_dm_room(&u, &r, now_ms())?;
            } else {
                tx.forget_dm_room(&u, &r)?;
            }
            Ok(Wrote {
                applied: true,
                count: 0,
            })
        })?;
        Ok(())
    }

    /// Takes the right to run the Matrix sync for `bot` (a user id): on PostgreSQL, an
    /// advisory lock only one instance holds, released when that instance dies or loses the
    /// database; `None` while another instance holds it. On SQLite (one instance per file)
    /// it is always granted.
    pub fn hold_sync_lock(&self, bot: &str) -> Result<Option<SyncLock>> {
        self.db.hold_lock(&format!("zonegraph matrix sync {bot}"))
    }

    /// Whether `lock` is still held (its connection to the database is alive).
    pub fn still_holds(&self, lock: &SyncLock) -> bool {
        self.db.still_holds(lock)
    }
}
