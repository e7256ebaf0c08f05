//! An admin's edit of a character sheet (`!char set`, `zonegraph char`): applied by
//! compare-and-set on the sheet's row, and logged with who made it.

use std::sync::mpsc;

use anyhow::{Result, bail};
use zonegraph_core::chat;
use zonegraph_core::engine::{CharEdit, Character, Refusal};

use super::{Store, Wrote};
use crate::clock::now_ms;
use crate::db;
use crate::gogobee::carry::FirstSheet;

impl Store {
    /// Applies `by`'s edit to `user`'s stored character in one write and logs it; the sheet
    /// after, or why it was refused (a key past the limits).
    pub fn edit_character(
        &self,
        by: &str,
        user: &str,
        edit: &CharEdit,
    ) -> Result<Result<Character, Refusal>> {
        let (sent, outcome) = mpsc::sync_channel(1);
        let (u, e) = (user.to_string(), edit.clone());
        let first = self.first_sheet();
        self.write(move |tx| {
            let result = edit_character(tx, &u, &e, now_ms(), &first)?;
            let applied = result.is_ok();
            let _ = sent.send(result);
            Ok(Wrote { applied, count: 0 })
        })?;
        let result = outcome
            .recv()
            .map_err(|_| anyhow::anyhow!("the database writer has stopped"))?;
        if result.is_ok() {
            // The sheet decides what the player view shows (a Perception score, keys).
            self.changed(user);
        }
        log_edit(by, user, edit, &result);
        Ok(result)
    }
}

/// Applies an admin's `edit` to `user`'s character in `tx` (the writer's transaction, or the
/// `zonegraph char` command's); the sheet after, or the refusal. The caller logs it with
/// [`log_edit`] once committed. The row is written by compare-and-set on the version just read.
/// A user with no sheet yet gets their first one (see [`FirstSheet`]) first.
pub fn edit_character(
    tx: &mut db::Tx<'_>,
    user: &str,
    edit: &CharEdit,
    now: i64,
    first: &FirstSheet,
) -> Result<Result<Character, Refusal>> {
    let stored = tx.character(user)?;
    let version = stored.as_ref().map(|s| s.version);
    let mut character = match stored {
        Some(s) => s.character,
        None => first.of(tx, user)?,
    };
    if let Err(refusal) = character.edit(edit) {
        return Ok(Err(refusal));
    }
    if !tx.put_character_cas(user, &character, version, now)? {
        bail!("the character of {user} changed under the edit; try again");
    }
    Ok(Ok(character))
}

/// The log line of a sheet edit, once it is committed (or refused): who changed whom, and how.
pub fn log_edit(by: &str, user: &str, edit: &CharEdit, result: &Result<Character, Refusal>) {
    let what = chat::edit_words(edit);
    match result {
        Ok(_) => tracing::info!(user, by, "character {user}: {what} (by {by})"),
        Err(refusal) => tracing::info!(
            user,
            by,
            refusal = ?refusal,
            "character {user}: {what} by {by} refused"
        ),
    }
}
