//! The store's housekeeping: the fork-timeout sweep (a fork left open too long is decided
//! for the player), and what is kept how long (ended runs, delivered notices, the versions
//! ended runs were played on); the service runs both on a timer.

use anyhow::{Result, bail};
use zonegraph_core::bot::{self, Authority, Context};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine;

use super::{CAS_ATTEMPTS, CommandSettings, Loaded, Outbox, Rows, RunRef, Store, write_player};
use crate::clock::now_ms;
use crate::db;
use crate::store::catalog::ForRun;

/// How many ended runs of each player stay in the run table (their run links answer); the
/// older ones are moved to the history (`Store::archive_runs`).
pub const KEEP_ENDED_RUNS: i64 = 20;

/// How long a delivered notice is kept (30 days).
pub const KEEP_DELIVERED_NOTICES_MS: i64 = 30 * 24 * 3600 * 1000;

/// How long the version of a run that ended is kept whole: its map link shows the graph it
/// was played on for that long (then the zone served).
pub const KEEP_ENDED_RUNS_MS: i64 = 7 * 24 * 3600 * 1000;

impl Store {
    /// The users whose active run has a fork due at `now` (the engine's rule,
    /// [`engine::forks_due_offered_by`]), each with their run row's version; the sweep
    /// applies the timeout to each with [`Store::sweep_user`].
    pub fn due_users(&self, now: i64, fork_timeout_ms: i64) -> Result<Vec<(String, i64)>> {
        let offered_by = engine::forks_due_offered_by(now, fork_timeout_ms);
        self.read(|c| c.users_with_forks_due(offered_by))
    }

    /// Moves the ended runs of each player past their [`KEEP_ENDED_RUNS`] newest out of the
    /// table every command reads, at most `at_most` at a time (see
    /// [`db::Tx::archive_ended_runs`]). Not while gogobee may still read its run table (its
    /// linear columns are there): its history stays where gogobee looks. How many moved.
    pub fn archive_runs(&self, at_most: i64, now: i64) -> Result<u64> {
        if self.db.has_gogobee_run_columns() {
            return Ok(0);
        }
        self.db.write(
            move |tx| tx.archive_ended_runs(KEEP_ENDED_RUNS, at_most, now),
            |_| true,
        )
    }

    /// How many of `user`'s ended runs were moved to the history.
    pub fn history_count(&self, user: &str) -> Result<i64> {
        self.read(|tx| tx.history_count(user))
    }

    /// Deletes the notices delivered more than [`KEEP_DELIVERED_NOTICES_MS`] before `now`
    /// (a delivered notice is only kept to show what went); how many went.
    pub fn prune_notices(&self, now: i64) -> Result<u64> {
        let before = now.saturating_sub(KEEP_DELIVERED_NOTICES_MS);
        self.db
            .write(move |tx| tx.prune_delivered_notices(before), |_| true)
    }

    /// Applies the fork timeout to `user`'s run; true when it picked for them (the notice
    /// is queued in the same transaction as the move).
    pub fn sweep_user(&self, user: &str, s: &CommandSettings) -> Result<bool> {
        for _ in 0..CAS_ATTEMPTS {
            let now = now_ms();
            let first = self.first_sheet();
            let (swept, held) = self.db.read_then_write(|tx| {
                let Loaded {
                    mut player,
                    run: stored,
                    character_version,
                    ..
                } = Self::load_player(tx, user, &first)?;
                let before = player.clone();
                let cx = Context {
                    now,
                    new_run_id: String::new(),
                    run_link: None,
                    fork_timeout_ms: s.fork_timeout_ms,
                    syntax: Syntax::Chat,
                    authority: Authority::Player,
                };
                let ForRun { zones, .. } = self.catalog.zones_for(tx, stored.as_ref())?;
                let Some((notice, events)) = bot::sweep_told(&zones, &mut player, &cx) else {
                    return Ok((false, None));
                };
                let outbox = match (&stored, &self.events_out) {
                    (Some(row), Some(limits)) => Some(Outbox::of(
                        &events,
                        player
                            .run
                            .as_ref()
                            .map(|run| RunRef::of(run, &row.link_token, &s.public_url))
                            .as_ref(),
                        limits,
                    )?),
                    _ => None,
                };
                let run_id = player
                    .run
                    .as_ref()
                    .map(|r| r.run_id.clone())
                    .unwrap_or_default();
                let u = user.to_string();
                let write: db::Write = Box::new(move |tx| {
                    let rows = Rows {
                        run: stored.as_ref(),
                        character_version,
                    };
                    // The sweep starts no run.
                    let held =
                        write_player(tx, &u, rows, &before, &None, &player, (0, None, None), now)?;
                    if held {
                        tx.push_notice(&u, &run_id, &notice.text, &notice.html, now)?;
                        if let Some(o) = &outbox {
                            o.push(tx, &u, now)?;
                        }
                    }
                    Ok(held)
                });
                Ok((true, Some(write)))
            })?;
            match held {
                None => return Ok(swept),
                Some(true) => {
                    self.changed(user);
                    return Ok(true);
                }
                Some(false) => {}
            }
        }
        bail!("the run of {user} kept changing under the sweep")
    }
}
