//! The work kept in this browser's local storage: the autosave, the work that opening
//! another zone replaced, and bringing that back.
//!
//! The autosave runs off the edit's frame: written [`DELAY_MS`] after the last edit (each
//! edit re-arms the timer), and at once when the page is hidden or left (`pagehide`,
//! `visibilitychange` to hidden), when the editor page closes, and before anything reads
//! the saved work back, so no edit is ever lost to the delay.

use std::cell::RefCell;

use gloo_events::EventListener;
use gloo_storage::{LocalStorage, Storage};
use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use zonegraph_core::format::{self, ZoneFile};

use super::state::State;
use super::{AUTOSAVE_KEY, PREVIOUS_KEY};
use crate::editor::Editor;

/// How long after the last edit the work is written (a burst of edits writes once).
pub const DELAY_MS: u32 = 300;

thread_local! {
    /// The editor whose work is not written yet, and the timer that will write it.
    static PENDING: RefCell<Option<(RwSignal<Editor>, Timeout)>> = const { RefCell::new(None) };
    /// The page-hide listeners, added once for the app's life.
    static LISTENERS: RefCell<Vec<EventListener>> = const { RefCell::new(Vec::new()) };
}

/// Writes the work as the zone file a download gives (the canonical form: one serializer in
/// the bundle, not a second compact one).
pub fn save(file: &ZoneFile) {
    let _ = LocalStorage::raw().set_item(AUTOSAVE_KEY, &format::to_pretty_json(file));
}

/// The text kept under `key`, if any.
pub fn saved(key: &str) -> Option<String> {
    LocalStorage::raw().get_item(key).ok().flatten()
}

/// The work saved under `key` by the last visit, if any (a legacy zone opens compiled).
pub fn restore(key: &str) -> Option<Editor> {
    Editor::open_text(&saved(key)?).ok()
}

/// Whether there is work that opening another zone replaced.
pub fn has_previous() -> bool {
    saved(PREVIOUS_KEY).is_some()
}

/// Keeps the work saved now as the previous work (opening another zone replaces it); false
/// when there was none.
pub fn keep_as_previous() -> bool {
    match saved(AUTOSAVE_KEY) {
        Some(prev) => {
            let _ = LocalStorage::raw().set_item(PREVIOUS_KEY, &prev);
            true
        }
        None => false,
    }
}

/// Forgets the saved work and starts a new zone.
pub fn discard(state: State) {
    LocalStorage::delete(AUTOSAVE_KEY);
    state.reset_to(
        Editor::empty("new_zone", "New zone"),
        "Discarded: a new zone.",
    );
}

/// Brings back the previous work, keeping the work it replaces as the previous in its place
/// (or forgetting the previous when nothing was saved).
pub fn bring_back(state: State) {
    let Some(prev) = restore(PREVIOUS_KEY) else {
        return;
    };
    now();
    if !keep_as_previous() {
        LocalStorage::delete(PREVIOUS_KEY);
    }
    state.reset_to(
        prev,
        "Brought back your previous work (the zone it replaced is kept in its place).",
    );
}

/// Writes `editor`'s work after the delay, replacing (cancelling) a pending write.
pub fn later(editor: RwSignal<Editor>) {
    listen();
    let timer = Timeout::new(DELAY_MS, now);
    // The replaced timer is dropped outside the borrow (dropping it cancels it).
    let replaced = PENDING.with(|p| p.borrow_mut().replace((editor, timer)));
    drop(replaced);
}

/// Writes the pending work, if any, now.
pub fn now() {
    let pending = PENDING.with(|p| p.borrow_mut().take());
    if let Some((editor, timer)) = pending {
        timer.cancel();
        editor.try_with_untracked(|e| save(e.file()));
    }
}

/// Flushes on `pagehide` (a reload, a closed tab, navigation away) and when the page is
/// hidden (a phone switching apps may never fire `pagehide`).
fn listen() {
    LISTENERS.with(|l| {
        let mut l = l.borrow_mut();
        if !l.is_empty() {
            return;
        }
        let Some(window) = web_sys::window() else {
            return;
        };
        l.push(EventListener::new(&window, "pagehide", |_| now()));
        if let Some(document) = window.document() {
            let doc = document.clone();
            l.push(EventListener::new(
                &document,
                "visibilitychange",
                move |_| {
                    if doc.hidden() {
                        now();
                    }
                },
            ));
        }
    });
}
