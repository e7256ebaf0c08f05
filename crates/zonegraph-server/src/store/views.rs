//! What a run link shows: the owner of a run link, the player's view of its run (with the
//! change stamp the live streams compare), and a player's current run with its link.

use anyhow::Result;
use zonegraph_core::engine;

use super::{PlayerRun, RunRef, RunView, Store, is_token};

impl Store {
    /// The user whose run a link token names; `None` for an unknown token.
    pub fn run_owner(&self, token: &str) -> Result<Option<String>> {
        if !is_token(token) {
            return Ok(None);
        }
        self.db
            .read_public(|c| Ok(c.run_by_token(token)?.map(|s| s.user_id)))
    }

    /// The player's view of the run a link token names; `None` for an unknown token.
    pub fn run_view(&self, token: &str) -> Result<Option<RunView>> {
        Ok(self.run_view_stamped(token)?.map(|(view, _)| view))
    }

    /// [`Store::run_view`], with the change stamp of the rows it was built from (see
    /// [`db::Tx::run_stamps`]): the run's row version and its player's sheet version.
    pub fn run_view_stamped(&self, token: &str) -> Result<Option<(RunView, (i64, i64))>> {
        if !is_token(token) {
            return Ok(None);
        }
        let first = self.first_sheet();
        let Some((stored, character, sheet_version)) = self.db.read_public(|c| {
            let Some(stored) = c.run_by_token(token)? else {
                return Ok(None);
            };
            let (character, version) = match c.character(&stored.user_id)? {
                Some(s) => (s.character, s.version),
                None => (first.of(c, &stored.user_id)?, -1),
            };
            Ok(Some((stored, character, version)))
        })?
        else {
            return Ok(None);
        };
        let Some(zone) = self.catalog.graph_of(&self.db, &stored)? else {
            return Ok(None);
        };
        let view = engine::player_view(&zone, &stored.run, &character);
        Ok(Some((RunView::of(view), (stored.version, sheet_version))))
    }

    /// `GET /api/players/{user}/run`: the player's run (active, else the latest) as its
    /// page shows it, with its link; `None` when the player has no run, or its zone is gone.
    pub fn player_run(&self, user: &str, public_url: &str) -> Result<Option<PlayerRun>> {
        let Some(stored) = self.read(|tx| Ok(tx.player_rows(user)?.run))? else {
            return Ok(None);
        };
        let Some(RunView { view, map, status }) = self.run_view(&stored.link_token)? else {
            return Ok(None);
        };
        Ok(Some(PlayerRun {
            run: RunRef::of(&stored.run, &stored.link_token, public_url),
            view,
            map,
            status,
        }))
    }
}
