//! The editor page's state: the [`Editor`] model, what the map and panels draw from it, the
//! selection; every change to the work goes through it, so each is re-checked, redrawn and
//! autosaved.

use std::sync::Arc;

use leptos::prelude::*;
use zonegraph_core::format::{NodeFile, ZoneFile};

use super::autosave;
use crate::browser;
use crate::doc::{self, Loaded};
use crate::editor::{self, Edit, Editor};
use crate::insight::Insight;
use crate::map::Sel;

/// The editor's state: the model, and what the map and panels draw from it.
#[derive(Clone, Copy)]
pub(super) struct State {
    pub editor: RwSignal<Editor>,
    pub loaded: RwSignal<Arc<Loaded>>,
    pub note: RwSignal<String>,
    pub selection: RwSignal<Option<Sel>>,
    /// Rooms selected besides `selection` (shift-click).
    pub multi: RwSignal<Vec<String>>,
    /// The id of the zone this editor opened from the server (or last published there):
    /// Publish may replace that zone, and only that one.
    pub from_server: RwSignal<Option<String>>,
    /// The server the publish form names, and its token (kept only while the page is open,
    /// sent only in the `Authorization` header).
    pub server: RwSignal<String>,
    pub token: RwSignal<String>,
    /// The version the work is compared with (the Changes tab): the file as it was opened,
    /// from the server or elsewhere, or as last published.
    pub base: RwSignal<Arc<ZoneFile>>,
    /// What players did in the zone, as last loaded from the server (the Insight tab), or
    /// why it could not be loaded.
    pub insight: RwSignal<Option<Result<Arc<Insight>, String>>>,
}

impl State {
    /// The state of an editor opened on `start`, with `note` shown.
    pub fn new(start: Editor, note: String) -> State {
        let first = Arc::new(doc::generated(
            &editor::file_name(start.file()),
            start.file(),
        ));
        State {
            base: RwSignal::new(Arc::new(start.file().clone())),
            loaded: RwSignal::new(first),
            editor: RwSignal::new(start),
            note: RwSignal::new(note),
            selection: RwSignal::new(None),
            multi: RwSignal::new(Vec::new()),
            from_server: RwSignal::new(None),
            server: RwSignal::new(browser::origin()),
            token: RwSignal::new(String::new()),
            insight: RwSignal::new(None),
        }
    }

    /// Re-checks and redraws from the model and saves it (after every edit, undo and redo).
    pub fn refresh(self) {
        let loaded = self
            .editor
            .with_untracked(|e| Arc::new(doc::generated(&editor::file_name(e.file()), e.file())));
        self.loaded.set(loaded);
        autosave::later(self.editor);
    }

    /// Makes `edit`, or notes why it was refused; whether it was made.
    pub fn edit(self, edit: Edit) -> bool {
        let result = self.editor.try_update(|e| e.apply(edit));
        match result {
            Some(Ok(())) => {
                self.note.set(String::new());
                self.refresh();
                true
            }
            Some(Err(why)) => {
                self.note.set(format!("Not done: {why}."));
                false
            }
            None => false,
        }
    }

    pub fn file<T>(self, f: impl FnOnce(&ZoneFile) -> T) -> T {
        self.editor.with(|e| f(e.file()))
    }

    /// A room as it is now, without tracking (for event handlers).
    pub fn room_now(self, id: &str) -> Option<NodeFile> {
        untrack(|| self.room(id))
    }

    pub fn room(self, id: &str) -> Option<NodeFile> {
        self.file(|f| {
            f.nodes
                .as_deref()
                .unwrap_or_default()
                .iter()
                .find(|n| n.node_id == id)
                .cloned()
        })
    }

    /// The selected rooms: the selection and the shift-clicked ones.
    pub fn selected_rooms(self) -> Vec<String> {
        let mut ids = self.multi.get_untracked();
        if let Some(Sel::Room(id)) = self.selection.get_untracked()
            && !ids.contains(&id)
        {
            ids.insert(0, id);
        }
        ids
    }

    /// Deletes the selected rooms (with their passages) as one edit, or the selected
    /// passage; false when nothing is selected or the edit is refused.
    pub fn delete_selected(self) -> bool {
        let ids = self.selected_rooms();
        let passage = match self.selection.get_untracked() {
            Some(Sel::Passage(index)) => Some(index),
            _ => None,
        };
        let Some(edit) = editor::delete_edit(ids, passage) else {
            return false;
        };
        let done = self.edit(edit);
        if done {
            self.selection.set(None);
            self.multi.set(Vec::new());
        }
        done
    }

    pub fn move_selected(self, dx: i32, dy: i32) {
        let ids = self.selected_rooms();
        if !ids.is_empty() && (dx, dy) != (0, 0) {
            self.edit(Edit::MoveRooms { ids, dx, dy });
        }
    }

    /// Adds a passage and selects it.
    pub fn connect(self, from: &str, to: &str) {
        if self.edit(Edit::Connect(editor::passage(from, to))) {
            let last = self
                .file(|f| f.edges.as_ref().map_or(0, Vec::len))
                .saturating_sub(1);
            self.multi.set(Vec::new());
            self.selection.set(Some(Sel::Passage(last)));
        }
    }

    /// Takes back the last edit, clearing the selection.
    pub fn undo(self) {
        if self.editor.try_update(Editor::undo) == Some(true) {
            self.selection.set(None);
            self.multi.set(Vec::new());
            self.refresh();
        }
    }

    /// Makes the last undone edit again, clearing the selection.
    pub fn redo(self) {
        if self.editor.try_update(Editor::redo) == Some(true) {
            self.selection.set(None);
            self.multi.set(Vec::new());
            self.refresh();
        }
    }

    /// Replaces the work with `e` (nothing selected), saying `words`.
    pub fn reset_to(self, e: Editor, words: &str) {
        self.base.set(Arc::new(e.file().clone()));
        self.editor.set(e);
        self.from_server.set(None);
        self.insight.set(None);
        self.selection.set(None);
        self.multi.set(Vec::new());
        self.refresh();
        self.note.set(words.to_string());
    }
}
