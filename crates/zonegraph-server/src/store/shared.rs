//! What the store's owners reach through it, each one call to its owner: the zones served
//! (`catalog`), the scoped API tokens, the designers' reads (`insight`, `review`), and what
//! wakes an instance to another instance's changes.

use std::sync::Arc;

use anyhow::Result;
use zonegraph_core::zone::Zone;

use super::catalog::{Author, Catalog, Published, Refused, Withdrawn};
use super::{Store, insight, review};
use crate::db;

impl Store {
    /// The zones served now.
    pub fn zones(&self) -> Arc<Vec<Zone>> {
        self.catalog.served().zones.clone()
    }

    /// The zones served now, with their versions.
    pub fn served(&self) -> Arc<crate::store::catalog::Served> {
        self.catalog.served()
    }

    /// Serves the zones another instance (or `zonegraph zones`) changed since they were
    /// loaded; `true` when they had changed.
    pub fn refresh_zones(&self) -> Result<bool> {
        self.catalog.refresh(&self.db)
    }

    /// Syncs `--zones` again (see [`Catalog::sync_folder`]), all or nothing: any error in
    /// the zones that would be served refuses it (the message lists every finding) and the
    /// zones served stay as they were. Returns what is worth saying: the warnings (the
    /// checks', files the database is ahead of), and what was imported.
    pub fn reload(&self) -> Result<(Vec<String>, Vec<String>)> {
        let synced = self.catalog.sync_folder(&self.db)?;
        Ok((
            synced.warning_words(&self.catalog_dir()),
            synced.imported_words(),
        ))
    }

    fn catalog_dir(&self) -> std::path::PathBuf {
        self.catalog.dir().to_path_buf()
    }

    /// Publishes a zone file (see [`Catalog::publish`]).
    pub fn publish(
        &self,
        text: &str,
        author: &Author,
        force: bool,
    ) -> Result<Result<Published, Refused>> {
        self.catalog.publish(&self.db, text, author, force)
    }

    /// Withdraws a zone (see [`Catalog::withdraw`]); the players told are followed by their
    /// run pages.
    pub fn withdraw(
        &self,
        zone_id: &str,
        force: bool,
        author: &Author,
    ) -> Result<Result<Withdrawn, Refused>> {
        self.catalog.withdraw(&self.db, zone_id, force, author)
    }

    /// The scoped API tokens this instance knows (see [`crate::tokens`]).
    pub fn tokens(&self) -> &crate::tokens::TokenBook {
        &self.tokens
    }

    /// Reads the scoped API tokens from the database again; returns what is worth logging.
    pub fn look_up_token(&self, token: &str) -> Result<Option<crate::tokens::Grant>> {
        let hash = crate::tokens::sha256_hex(token);
        Ok(self
            .db
            .read(|tx| tx.api_token(&hash))?
            .and_then(|row| self.tokens.add(&row)))
    }

    /// Reads the scoped API tokens from the database again; returns what is worth logging.
    pub fn refresh_tokens(&self) -> Result<Vec<String>> {
        let rows = self.db.read(|tx| tx.api_tokens())?;
        Ok(self.tokens.load(&rows))
    }

    /// Every version of `zone_id`, oldest first.
    pub fn zone_history(&self, zone_id: &str) -> Result<Vec<db::VersionRow>> {
        Catalog::history(&self.db, zone_id)
    }

    /// What players do in `zone_id`'s version `version` (the newest by default), from the
    /// runs started at or after `since` (see [`insight`]).
    pub fn insight(
        &self,
        zone_id: &str,
        version: Option<i64>,
        since: i64,
    ) -> Result<Option<self::insight::VersionInsight>> {
        self::insight::of_database(&self.db, zone_id, version, since)
    }

    /// What publishing `text` over `zone_id`'s served version would do, over the runs going
    /// and the `most_recent` ended ones; given up when `stop` says so (see [`review`]).
    pub fn review(
        &self,
        zone_id: &str,
        text: &str,
        most_recent: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<Result<self::review::VersionReview, self::review::Unreviewable>> {
        self::review::of_database(&self.db, zone_id, text, most_recent, stop)
    }

    /// This instance's name, as zone versions record it.
    pub fn instance(&self) -> &str {
        &self.catalog.instance
    }

    /// What wakes this instance to look for other instances' changes (see
    /// [`db::Database::wakeups`]).
    pub fn wakeups(&self, listen: bool) -> db::Wakeups {
        self.db.wakeups(listen)
    }

    /// The change stamps of the run links `tokens` (see [`db::Tx::run_stamps`]).
    pub fn run_stamps(&self, tokens: &[String]) -> Result<Vec<(String, i64, i64)>> {
        self.db.read_public(|tx| tx.run_stamps(tokens))
    }

    /// Tells the run pages of this instance that `user` changed (a change another instance
    /// committed, found by polling).
    pub fn tell_changed(&self, user: &str) {
        self.changed(user);
    }

    /// Round trips to PostgreSQL so far (`None` on SQLite): see [`db::Database::round_trips`].
    pub fn round_trips(&self) -> Option<db::RoundTrips> {
        self.db.round_trips()
    }
}
