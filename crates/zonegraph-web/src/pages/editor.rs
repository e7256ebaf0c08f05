//! The zone editor's page (`#edit`): the [`Editor`] model drawn on the map, with controls to
//! add, place, connect, edit and delete rooms and passages, edit the zone's metadata and
//! regions, undo and redo, the core's findings, stats and pass chances after every edit, a
//! playtest from any room (the designer's playtest panel), autosave to local storage
//! (restored on the next visit until discarded), a live share link and download as a zone
//! file.
//!
//! On the map: drag a room to place it, drop it on another room to connect the two,
//! shift-click to select more rooms (dragging one moves them all). By keyboard: the room's
//! and passage's forms, "Connect to…", the move buttons, Shift+arrow keys on the map,
//! Ctrl+Z / Ctrl+Shift+Z.

use std::sync::Arc;

use gloo_storage::{LocalStorage, Storage};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use zonegraph_core::diagnostic::Code;
use zonegraph_core::format::{self, EdgeFile, LockKind, NodeFile, NodeKind, RegionFile, ZoneFile};

use crate::doc::{self, Loaded};
use crate::editor::{self, Edit, Editor};
use crate::map::{MapView, Sel};
use crate::model::{self, BOX_H, BOX_W, CELL_H, CELL_W, MapModel, num};
use crate::names::{kind_name, lock_name};
use crate::pages::designer::{diagnostics, playtest::PlaytestPanel, stats};
use crate::playtest::Playtest;
use crate::{browser, share};

/// Where the work in progress is kept between visits.
pub const AUTOSAVE_KEY: &str = "zonegraph-editor";
/// The work that opening another zone replaced, until brought back or discarded.
pub const PREVIOUS_KEY: &str = "zonegraph-editor-previous";

/// A zone handed to the editor to open (from the gallery, a file, a paste, a share link).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    pub name: String,
    pub text: String,
}

/// The side panel's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Checks,
    Stats,
    Playtest,
}

/// The editor's state: the model, and what the map and panels draw from it.
#[derive(Clone, Copy)]
struct State {
    editor: RwSignal<Editor>,
    loaded: RwSignal<Arc<Loaded>>,
    note: RwSignal<String>,
    selection: RwSignal<Option<Sel>>,
    /// Rooms selected besides `selection` (shift-click).
    multi: RwSignal<Vec<String>>,
}

impl State {
    /// Re-checks and redraws from the model and saves it (after every edit, undo and redo).
    fn refresh(self) {
        let loaded = self
            .editor
            .with_untracked(|e| Arc::new(doc::generated(&editor::file_name(e.file()), e.file())));
        self.loaded.set(loaded);
        autosave::later(self.editor);
    }

    fn edit(self, edit: Edit) -> bool {
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

    fn file<T>(self, f: impl FnOnce(&ZoneFile) -> T) -> T {
        self.editor.with(|e| f(e.file()))
    }

    /// A room as it is now, without tracking (for event handlers).
    fn room_now(self, id: &str) -> Option<NodeFile> {
        untrack(|| self.room(id))
    }

    fn room(self, id: &str) -> Option<NodeFile> {
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
    fn selected_rooms(self) -> Vec<String> {
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
    fn delete_selected(self) -> bool {
        let ids = self.selected_rooms();
        let edit = match (ids.len(), self.selection.get_untracked()) {
            (0, Some(Sel::Passage(index))) => Edit::DeletePassage { index },
            (0, _) => return false,
            (1, _) => Edit::DeleteRoom {
                id: ids.into_iter().next().unwrap_or_default(),
            },
            _ => Edit::DeleteRooms { ids },
        };
        let done = self.edit(edit);
        if done {
            self.selection.set(None);
            self.multi.set(Vec::new());
        }
        done
    }

    fn move_selected(self, dx: i32, dy: i32) {
        let ids = self.selected_rooms();
        if !ids.is_empty() && (dx, dy) != (0, 0) {
            self.edit(Edit::MoveRooms { ids, dx, dy });
        }
    }
}

/// Writes the work as the zone file a download gives (the canonical form: one serializer in
/// the bundle, not a second compact one).
fn save(file: &ZoneFile) {
    let _ = LocalStorage::raw().set_item(AUTOSAVE_KEY, &format::to_pretty_json(file));
}

/// The autosave, off the edit's frame: written [`autosave::DELAY_MS`] after the last edit
/// (each edit re-arms the timer), and at once when the page is hidden or left (`pagehide`,
/// `visibilitychange` to hidden), when the editor page closes, and before anything reads
/// the saved work back, so no edit is ever lost to the delay.
mod autosave {
    use std::cell::RefCell;

    use gloo_events::EventListener;
    use gloo_timers::callback::Timeout;
    use leptos::prelude::*;

    use crate::editor::Editor;

    /// How long after the last edit the work is written (a burst of edits writes once).
    pub const DELAY_MS: u32 = 300;

    thread_local! {
        /// The editor whose work is not written yet, and the timer that will write it.
        static PENDING: RefCell<Option<(RwSignal<Editor>, Timeout)>> = const { RefCell::new(None) };
        /// The page-hide listeners, added once for the app's life.
        static LISTENERS: RefCell<Vec<EventListener>> = const { RefCell::new(Vec::new()) };
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
            editor.try_with_untracked(|e| super::save(e.file()));
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
}

/// The work saved by the last visit, if any (a legacy zone opens compiled).
fn restore(key: &str) -> Option<Editor> {
    let text = LocalStorage::raw().get_item(key).ok().flatten()?;
    Editor::open_text(&text).ok()
}

/// A whole number from a form field, clamped; `None` when it is no number.
fn number(text: &str, lo: i64, hi: i64) -> Option<i64> {
    text.trim().parse::<i64>().ok().map(|v| v.clamp(lo, hi))
}

/// The editor page, on the work saved here, or on `open` (the work it replaces is kept).
#[component]
pub fn EditorPage(#[prop(optional)] open: Option<Result<Opened, String>>) -> impl IntoView {
    let mut note = String::new();
    // Work still waiting for its autosave (a page being replaced) is written first.
    autosave::now();
    on_cleanup(autosave::now);
    let start = match open {
        Some(Ok(o)) => match Editor::open_text(&o.text) {
            Ok(e) => {
                if let Some(prev) = LocalStorage::raw().get_item(AUTOSAVE_KEY).ok().flatten() {
                    let _ = LocalStorage::raw().set_item(PREVIOUS_KEY, &prev);
                    note = format!(
                        "Opened {}. The work it replaced is kept: \"Bring back previous work\" restores it.",
                        o.name
                    );
                } else {
                    note = format!("Opened {}.", o.name);
                }
                save(e.file());
                Some(e)
            }
            Err(why) => {
                note = format!("{} could not be opened: {why}", o.name);
                None
            }
        },
        Some(Err(why)) => {
            note = format!("Not opened: {why}");
            None
        }
        None => None,
    };
    // Back to plain `#edit`: a reload restores the saved work, not the link opened.
    browser::replace_hash("edit");
    let start = start.or_else(|| {
        let r = restore(AUTOSAVE_KEY);
        if r.is_some() && note.is_empty() {
            note = "Restored your last work from this browser.".into();
        }
        r
    });
    let start = start.unwrap_or_else(|| Editor::empty("new_zone", "New zone"));
    let first = Arc::new(doc::generated(
        &editor::file_name(start.file()),
        start.file(),
    ));
    let state = State {
        loaded: RwSignal::new(first),
        editor: RwSignal::new(start),
        note: RwSignal::new(note),
        selection: RwSignal::new(None),
        multi: RwSignal::new(Vec::new()),
    };
    let selection = state.selection;
    let kind = RwSignal::new(NodeKind::Exploration);
    let tab = RwSignal::new(Tab::Checks);
    let has_previous = RwSignal::new(
        LocalStorage::raw()
            .get_item(PREVIOUS_KEY)
            .ok()
            .flatten()
            .is_some(),
    );
    // "Connect": the room a new passage starts from; the next room selected ends it.
    let connect_from = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(Sel::Room(to)) = selection.get() else {
            return;
        };
        if let Some(from) = connect_from.get_untracked() {
            connect_from.set(None);
            if from != to {
                connect(state, &from, &to);
            }
        }
    });

    // The playtest: from a chosen room, with the designer's character form and transcript.
    let play = RwSignal::new(Playtest::default());
    let run_id = RwSignal::new("playtest-1".to_string());
    let play_from = RwSignal::new(None::<String>);
    let play_zone = Memo::new_with_compare(
        move |_| {
            let from = play_from.get();
            state.editor.with(|e| {
                let file = match &from {
                    Some(id) => editor::playtest_file(e.file(), id),
                    None => e.file().clone(),
                };
                Arc::new(zonegraph_core::zone::build(&file).0)
            })
        },
        |a, b| !matches!((a, b), (Some(a), Some(b)) if Arc::ptr_eq(a, b)),
    );
    // The zone changed under the playtest: start again.
    Effect::new(move |_| {
        state.editor.track();
        play_from.track();
        play.set(Playtest::default());
    });

    let form_shows = Memo::new(move |_| FormShows::of(state));
    let map_model = Memo::new(move |_| {
        let l = state.loaded.get();
        let run = if tab.get() == Tab::Playtest {
            play.with(|p| p.run().cloned())
        } else {
            None
        };
        Arc::new(model::build(&l.zone, &l.layout, run.as_ref()))
    });
    // The rings over the map: drawn into the map's drawing after it is drawn.
    Effect::new(move |_| {
        let m = map_model.get();
        let marks = marks(state);
        request_animation_frame(move || draw_marks(&m, &marks));
    });

    let add_room = move |_| {
        let (id, x, y) = state.editor.with_untracked(|e| {
            let id = e.new_room_id(kind.get_untracked());
            let nodes = e.file().nodes.as_deref().unwrap_or_default();
            let near = match selection.get_untracked() {
                Some(Sel::Room(sel)) => nodes.iter().find(|n| n.node_id == sel),
                _ => None,
            };
            // One row below the selected room, right of what that row holds already.
            let (x, y) = match near {
                Some(n) => {
                    let y = n.pos_y.unwrap_or(0) + 1;
                    let x = nodes
                        .iter()
                        .filter(|m| m.pos_y == Some(y))
                        .filter_map(|m| m.pos_x)
                        .max()
                        .map_or(n.pos_x.unwrap_or(0), |x| x + 1);
                    (x, y)
                }
                None => (
                    0,
                    nodes.iter().filter_map(|n| n.pos_y).max().unwrap_or(-1) + 1,
                ),
            };
            (id, x, y)
        });
        let k = kind.get_untracked();
        if state.edit(Edit::AddRoom(editor::room(&id, k, kind_name(k), x, y))) {
            state.multi.set(Vec::new());
            selection.set(Some(Sel::Room(id)));
        }
    };
    let undo = move || {
        if state.editor.try_update(Editor::undo) == Some(true) {
            selection.set(None);
            state.multi.set(Vec::new());
            state.refresh();
        }
    };
    let redo = move || {
        if state.editor.try_update(Editor::redo) == Some(true) {
            selection.set(None);
            state.multi.set(Vec::new());
            state.refresh();
        }
    };
    // Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y; Delete or Backspace deletes the selected rooms (or
    // passage); except while typing in a field.
    let keys = window_event_listener(ev::keydown, move |e: ev::KeyboardEvent| {
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        if typing || e.alt_key() {
            return;
        }
        if !(e.ctrl_key() || e.meta_key()) {
            if matches!(e.key().as_str(), "Delete" | "Backspace")
                && !e.shift_key()
                && state.delete_selected()
            {
                e.prevent_default();
            }
            return;
        }
        match (e.key().to_lowercase().as_str(), e.shift_key()) {
            ("z", false) => undo(),
            ("z", true) | ("y", _) => redo(),
            _ => return,
        }
        e.prevent_default();
    });
    on_cleanup(move || keys.remove());

    let download = move |_| {
        let (name, json) = state
            .editor
            .with_untracked(|e| (editor::file_name(e.file()), e.to_json()));
        if let Err(e) = browser::download(&name, "application/json", &json) {
            state.note.set(format!("The download failed: {e}"));
        }
    };
    // The share link, made while it is shown, after every edit.
    let sharing = RwSignal::new(false);
    let share_link = Memo::new(move |_| {
        if !sharing.get() {
            return None;
        }
        Some(
            state
                .editor
                .with(|e| share::encode_share(&e.to_json()))
                .map(|f| format!("{}#edit/{f}", browser::base_url()))
                .map_err(|e| format!("No link: {e}.")),
        )
    });
    // Publishing: the server's URL and API token, kept only while the page is open.
    let publishing = RwSignal::new(false);
    let server = RwSignal::new(browser::origin());
    let token = RwSignal::new(String::new());
    let publish = move |e: leptos::ev::SubmitEvent| {
        e.prevent_default();
        let url = format!("{}/api/zones", server.get_untracked().trim_end_matches('/'));
        let (t, json) = (
            token.get_untracked(),
            state.editor.with_untracked(Editor::to_json),
        );
        state.note.set("Publishing…".into());
        leptos::task::spawn_local(async move {
            let words = match browser::post_text(&url, &t, "application/json", &json).await {
                Ok((status, body)) => editor::publish_words(status, &body),
                Err(e) => format!("Not published: {e}."),
            };
            state.note.set(words);
        });
    };
    let reset_to = move |e: Editor, words: &str| {
        state.editor.set(e);
        selection.set(None);
        state.multi.set(Vec::new());
        state.refresh();
        state.note.set(words.to_string());
    };
    let discard = move |_| {
        LocalStorage::delete(AUTOSAVE_KEY);
        reset_to(
            Editor::empty("new_zone", "New zone"),
            "Discarded: a new zone.",
        );
    };
    let bring_back = move |_| {
        if let Some(prev) = restore(PREVIOUS_KEY) {
            autosave::now();
            let current = LocalStorage::raw().get_item(AUTOSAVE_KEY).ok().flatten();
            match current {
                Some(c) => {
                    let _ = LocalStorage::raw().set_item(PREVIOUS_KEY, &c);
                }
                None => LocalStorage::delete(PREVIOUS_KEY),
            }
            reset_to(
                prev,
                "Brought back your previous work (the zone it replaced is kept in its place).",
            );
        }
        has_previous.set(
            LocalStorage::raw()
                .get_item(PREVIOUS_KEY)
                .ok()
                .flatten()
                .is_some(),
        );
    };

    let counts = move || {
        state.loaded.with(|l| {
            let errors = l.diagnostics.iter().filter(|d| d.is_error()).count();
            let warnings = l.diagnostics.len() - errors;
            if l.diagnostics.is_empty() {
                "No findings: the zone is clean.".to_string()
            } else {
                let plural =
                    |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
                format!(
                    "{}, {}",
                    plural(errors, "error"),
                    plural(warnings, "warning")
                )
            }
        })
    };
    let tab_button = move |t: Tab, label: &'static str| {
        view! {
            <button role="tab" aria-selected=move || (tab.get() == t).to_string()
                class:active=move || tab.get() == t on:click=move |_| tab.set(t)>{label}</button>
        }
    };
    let panel = move || match tab.get() {
        Tab::Checks => state
            .loaded
            .with(|l| diagnostics::view(l, selection))
            .into_any(),
        Tab::Stats => state.loaded.with(|l| stats::view(l)).into_any(),
        Tab::Playtest => {
            let zone = play_zone.get();
            let exec = Callback::new(move |text: String| {
                let zone = play_zone.get_untracked();
                let id = run_id.get_untracked();
                play.update(|p| p.command(&zone, &text, &id));
            });
            let rooms = state.file(room_names);
            let from = play_from.get_untracked();
            view! {
                <label class="field">"Start from"
                    <select aria-label="Playtest from room" on:change=move |e| {
                        let v = event_target_value(&e);
                        play_from.set((!v.is_empty()).then_some(v));
                    }>
                        <option value="" selected=from.is_none()>"the entry"</option>
                        {rooms.into_iter().map(|(id, name)| {
                            let sel = from.as_deref() == Some(id.as_str());
                            view! { <option value=id selected=sel>{name}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <PlaytestPanel zone=zone play=play run_id=run_id exec=exec/>
            }
            .into_any()
        }
    };

    // Pointer actions on the map: drag a room to place it, drop it on another to connect.
    let drag = StoredValue::new(None::<RoomDrag>);
    let on_down = move |e: ev::PointerEvent| {
        if e.button() != 0 || e.shift_key() {
            return;
        }
        let Some(g) = room_at(e.target()) else {
            return;
        };
        let Some(id) = g.get_attribute("data-node") else {
            return;
        };
        let scale = g
            .query_selector("rect.box")
            .ok()
            .flatten()
            .map_or(1.0, |r| r.get_bounding_client_rect().width() / model::BOX_W);
        let mut ids = state.selected_rooms();
        if !ids.contains(&id) {
            ids = vec![id.clone()];
        }
        drag.set_value(Some(RoomDrag {
            id,
            ids,
            x0: f64::from(e.client_x()),
            y0: f64::from(e.client_y()),
            scale,
            moved: false,
        }));
    };
    let on_move = move |e: ev::PointerEvent| {
        let Some(mut d) = drag.get_value() else {
            return;
        };
        let (dx, dy) = (
            f64::from(e.client_x()) - d.x0,
            f64::from(e.client_y()) - d.y0,
        );
        if !d.moved && dx.abs() + dy.abs() < 4.0 {
            return;
        }
        // The map must not pan while a room is dragged.
        e.stop_propagation();
        d.moved = true;
        let (sx, sy) = (dx / d.scale, dy / d.scale);
        for id in &d.ids {
            if let Some(g) = room_element(id) {
                let _ = g.set_attribute(
                    "style",
                    &format!("translate: {sx:.1}px {sy:.1}px; pointer-events: none"),
                );
                let _ = g.class_list().add_1("dragging");
            }
        }
        drag.set_value(Some(d));
    };
    let on_up = move |e: ev::PointerEvent| {
        let Some(d) = drag.get_value() else {
            return;
        };
        drag.set_value(None);
        for id in &d.ids {
            if let Some(g) = room_element(id) {
                let _ = g.remove_attribute("style");
                let _ = g.class_list().remove_1("dragging");
            }
        }
        if !d.moved {
            return;
        }
        let (x, y) = (f64::from(e.client_x()), f64::from(e.client_y()));
        let target = room_at(browser::element_at(x, y).map(Into::into))
            .and_then(|g| g.get_attribute("data-node"))
            .filter(|t| !d.ids.contains(t));
        match target {
            Some(to) => connect(state, &d.id, &to),
            None => {
                let dx = editor::cells_moved(x - d.x0, d.scale, CELL_W);
                let dy = editor::cells_moved(y - d.y0, d.scale, CELL_H);
                if (dx, dy) != (0, 0) {
                    state.edit(Edit::MoveRooms { ids: d.ids, dx, dy });
                }
            }
        }
    };
    let on_cancel = move |_: ev::PointerEvent| {
        if let Some(d) = drag.get_value() {
            for id in &d.ids {
                if let Some(g) = room_element(id) {
                    let _ = g.remove_attribute("style");
                    let _ = g.class_list().remove_1("dragging");
                }
            }
        }
        drag.set_value(None);
    };
    // Shift-click adds a room to the selection (or takes it out); a plain click selects one.
    let on_click = move |e: ev::MouseEvent| {
        let Some(id) = room_at(e.target()).and_then(|g| g.get_attribute("data-node")) else {
            return;
        };
        if !e.shift_key() {
            state.multi.set(Vec::new());
            return;
        }
        let primary = match selection.get_untracked() {
            Some(Sel::Room(p)) => Some(p),
            _ => None,
        };
        match primary {
            None => return,
            Some(p) if p == id => {}
            Some(_) => state.multi.update(|m| {
                if let Some(i) = m.iter().position(|x| *x == id) {
                    m.remove(i);
                } else {
                    m.push(id.clone());
                }
            }),
        }
        e.stop_propagation();
    };
    // Shift+arrow keys move the selected rooms; focus stays on the room.
    let on_key = move |e: ev::KeyboardEvent| {
        if !e.shift_key() || e.ctrl_key() || e.alt_key() || e.meta_key() {
            return;
        }
        let (dx, dy) = match e.key().as_str() {
            "ArrowLeft" => (-1, 0),
            "ArrowRight" => (1, 0),
            "ArrowUp" => (0, -1),
            "ArrowDown" => (0, 1),
            _ => return,
        };
        let Some(Sel::Room(id)) = selection.get_untracked() else {
            return;
        };
        e.prevent_default();
        e.stop_propagation();
        state.move_selected(dx, dy);
        request_animation_frame(move || {
            if let Some(g) =
                room_element(&id).and_then(|g| g.dyn_into::<web_sys::SvgElement>().ok())
            {
                let _ = g.focus();
            }
        });
    };

    let name = state.editor.with_untracked(|e| e.file().name.clone());
    let stem = state.editor.with_untracked(|e| e.file().zone_id.clone());
    view! {
        <div class="designer editor">
            <section class="map-pane">
                <div class="zone-head">
                    <div>
                        <h1>{move || state.editor.with(|e| e.file().name.clone())}</h1>
                        <p class="meta">{move || state.editor.with(|e| format!(
                            "editing {} · {} rooms · {} passages",
                            editor::file_name(e.file()),
                            e.file().nodes.as_ref().map_or(0, Vec::len),
                            e.file().edges.as_ref().map_or(0, Vec::len),
                        ))}</p>
                    </div>
                    <span class="spacer"></span>
                    <label>"Kind "
                        <select aria-label="Kind of the new room" on:change=move |e| {
                            let v = event_target_value(&e);
                            if let Some(k) = NodeKind::ALL.iter().find(|k| k.as_str() == v) {
                                kind.set(*k);
                            }
                        }>
                            {NodeKind::ALL.iter().map(|k| view! {
                                <option value=k.as_str() selected=*k == NodeKind::Exploration>{kind_name(*k)}</option>
                            }).collect_view()}
                        </select>
                    </label>
                    <button class="primary" on:click=add_room>"Add room"</button>
                    <button on:click=move |_| undo() title="Ctrl+Z" disabled=move || !state.editor.with(Editor::can_undo)>"Undo"</button>
                    <button on:click=move |_| redo() title="Ctrl+Shift+Z" disabled=move || !state.editor.with(Editor::can_redo)>"Redo"</button>
                    <button on:click=download>"Download"</button>
                    <button on:click=move |_| sharing.update(|s| *s = !*s)
                        aria-expanded=move || sharing.get().to_string()>"Share link"</button>
                    <button on:click=discard>"Discard"</button>
                    <button on:click=move |_| publishing.update(|p| *p = !*p)
                        aria-expanded=move || publishing.get().to_string()>"Publish…"</button>
                </div>
                <form class="publish" class:hidden=move || !publishing.get() on:submit=publish>
                    <label>"Server " <input type="url" prop:value=move || server.get()
                        on:input=move |e| server.set(event_target_value(&e))/></label>
                    <label>"API token " <input type="password" autocomplete="off"
                        prop:value=move || token.get() on:input=move |e| token.set(event_target_value(&e))/></label>
                    <button type="submit" class="primary">"Publish"</button>
                </form>
                {move || share_link.get().map(|r| match r {
                    Ok(link) => view! {
                        <div class="share-box">
                            <span>"This link opens the zone as it stands now in the editor:"</span>
                            <input readonly aria-label="Share link" prop:value=link.clone()/>
                            <button on:click=move |_| browser::copy(&link)>"Copy link"</button>
                        </div>
                    }.into_any(),
                    Err(e) => view! { <div class="share-box error" role="alert">{e}</div> }.into_any(),
                })}
                <p class="meta editor-note" role="status">
                    {move || state.note.get()}
                    {move || has_previous.get().then(|| view! {
                        " " <button class="link" on:click=bring_back>"Bring back previous work"</button>
                    })}
                </p>
                <div class="editor-map"
                    on:pointerdown:capture=on_down
                    on:pointermove:capture=on_move
                    on:pointerup:capture=on_up
                    on:pointercancel:capture=on_cancel
                    on:click:capture=on_click
                    on:keydown:capture=on_key
                >
                    <MapView model=map_model zone_name=name file_stem=stem selection=selection/>
                </div>
                <p class="hint">"Drag a room to place it; drop it on another room to connect them. Shift-click selects more rooms. Keyboard: Tab to a room, Enter selects it, Shift+arrow keys move the selected rooms, Delete deletes them."</p>
            </section>
            <aside class="side">
                <section class="details">
                    // Read, not only tracked: a memo nobody read has not computed, so has no
                    // sources to tell it of a change.
                    {move || form_shows.with(|_| untrack(|| selected_view(state, connect_from, play_from, tab)))}
                </section>
                <ZoneForm state=state/>
                <p class="check-counts" role="status">{counts}</p>
                <nav class="tabs" role="tablist">
                    {tab_button(Tab::Checks, "Checks")}
                    {tab_button(Tab::Stats, "Stats")}
                    {tab_button(Tab::Playtest, "Playtest")}
                </nav>
                <div class="panel">{panel}</div>
            </aside>
        </div>
    }
}

/// A ring drawn around a room besides the selection, with a caption above it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mark {
    room: String,
    /// CSS class of the ring (`mark-multi`, `mark-softlock`).
    class: &'static str,
    /// Drawn above the room ("⚠ soft-lock"); empty for none.
    caption: &'static str,
}

/// The rings over the map: the rooms selected besides the selection, and each soft-lock
/// where it is.
fn marks(state: State) -> Vec<Mark> {
    let mut marks: Vec<Mark> = state
        .multi
        .get()
        .into_iter()
        .map(|id| Mark {
            room: id,
            class: "mark-multi",
            caption: "",
        })
        .collect();
    state.loaded.with(|l| {
        marks.extend(
            l.diagnostics
                .iter()
                .filter(|d| d.code == Code::SoftLock)
                .filter_map(|d| {
                    Some(Mark {
                        room: d.node.clone()?,
                        class: "mark-softlock",
                        caption: "⚠ soft-lock",
                    })
                }),
        );
    });
    marks
}

/// Draws `marks` into the editor's map: a group of its own at the end of the drawing's
/// viewport (the map component never redraws that element, only what is inside its own
/// groups). Only numbers and fixed words go into the markup, never a zone's text.
fn draw_marks(m: &MapModel, marks: &[Mark]) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(Some(viewport)) = doc.query_selector(".editor-map g.viewport") else {
        return;
    };
    let g = match viewport.query_selector("g.editor-marks") {
        Ok(Some(g)) => g,
        _ => {
            let Ok(g) = doc.create_element_ns(Some("http://www.w3.org/2000/svg"), "g") else {
                return;
            };
            let _ = g.set_attribute("class", "editor-marks");
            let _ = g.set_attribute("aria-hidden", "true");
            let _ = viewport.append_child(&g);
            g
        }
    };
    let mut svg = String::new();
    for k in marks {
        let Some(r) = m.rooms.iter().find(|r| r.id == k.room) else {
            continue;
        };
        let (x, y) = (r.x - BOX_W / 2.0 - 10.0, r.y - BOX_H / 2.0 - 10.0);
        svg.push_str(&format!(
            "<g class=\"mark {}\"><rect x=\"{}\" y=\"{}\" width=\"204\" height=\"76\" rx=\"16\"></rect>",
            k.class,
            num(x),
            num(y)
        ));
        if !k.caption.is_empty() {
            svg.push_str(&format!(
                "<text class=\"mark-caption\" x=\"{}\" y=\"{}\">{}</text>",
                num(x + 8.0),
                num(y - 5.0),
                k.caption
            ));
        }
        svg.push_str("</g>");
    }
    g.set_inner_html(&svg);
}

/// A room being dragged: the one under the pointer, every room that moves with it, where
/// the pointer started, the map's scale, whether it moved yet.
#[derive(Clone, Debug)]
struct RoomDrag {
    id: String,
    ids: Vec<String>,
    x0: f64,
    y0: f64,
    scale: f64,
    moved: bool,
}

/// The map's room element around an event target.
fn room_at(target: Option<web_sys::EventTarget>) -> Option<web_sys::Element> {
    target?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest("g.room")
        .ok()
        .flatten()
}

/// The map's element of room `id`.
fn room_element(id: &str) -> Option<web_sys::Element> {
    let doc = web_sys::window()?.document()?;
    let all = doc.query_selector_all(".editor-map g.room").ok()?;
    (0..all.length())
        .filter_map(|i| all.item(i)?.dyn_into::<web_sys::Element>().ok())
        .find(|g| g.get_attribute("data-node").as_deref() == Some(id))
}

/// Adds a passage and selects it.
fn connect(state: State, from: &str, to: &str) {
    if state.edit(Edit::Connect(editor::passage(from, to))) {
        let last = state
            .file(|f| f.edges.as_ref().map_or(0, Vec::len))
            .saturating_sub(1);
        state.multi.set(Vec::new());
        state.selection.set(Some(Sel::Passage(last)));
    }
}

/// Every room of the file as (id, what a list shows for it), in file order.
fn room_names(f: &ZoneFile) -> Vec<(String, String)> {
    f.nodes
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|n| (n.node_id.clone(), room_name(n)))
        .collect()
}

fn room_name(n: &NodeFile) -> String {
    if n.label.is_empty() {
        n.node_id.clone()
    } else {
        format!("{} ({})", n.label, n.node_id)
    }
}

/// The zone's metadata and regions.
#[component]
fn ZoneForm(state: State) -> impl IntoView {
    let set_meta = move |change: &dyn Fn(&mut ZoneFile)| {
        let mut f = state.editor.with_untracked(|e| e.file().clone());
        change(&mut f);
        state.edit(Edit::SetMeta {
            name: f.name,
            tier: f.tier,
            min_level: f.min_level,
            max_level: f.max_level,
            allow_loops: f.allow_loops,
        });
    };
    let set_regions = move |change: &dyn Fn(&mut Vec<RegionFile>)| {
        let mut r = state.editor.with_untracked(|e| e.file().regions.clone());
        change(&mut r);
        state.edit(Edit::SetRegions(r));
    };
    let form = move || {
        let f = state.editor.with(|e| e.file().clone());
        let regions = f
            .regions
            .iter()
            .enumerate()
            .map(|(i, r)| {
                view! {
                    <li class="row region">
                        <input aria-label=format!("Region {} id", i + 1) prop:value=r.region_id.clone()
                            on:change=move |e| { let v = event_target_value(&e); set_regions(&|rs| rs[i].region_id = v.clone()); }/>
                        <input aria-label=format!("Region {} name", i + 1) prop:value=r.name.clone()
                            on:change=move |e| { let v = event_target_value(&e); set_regions(&|rs| rs[i].name = v.clone()); }/>
                        <input type="number" min="1" aria-label=format!("Region {} order", i + 1) prop:value=r.order.to_string()
                            on:change=move |e| if let Some(v) = number(&event_target_value(&e), 1, 999) {
                                set_regions(&|rs| rs[i].order = v as u32);
                            }/>
                        <button aria-label=format!("Remove region {}", i + 1)
                            on:click=move |_| set_regions(&|rs| { rs.remove(i); })>"✕"</button>
                    </li>
                }
            })
            .collect_view();
        view! {
            <label class="field">"Zone name"
                <input aria-label="Zone name" prop:value=f.name.clone() on:change=move |e| {
                    let v = event_target_value(&e);
                    set_meta(&|f| f.name = v.clone());
                }/>
            </label>
            <div class="row">
                <label class="field">"Tier"
                    <input aria-label="Tier" type="number" min="1" max="6" prop:value=f.tier.to_string() on:change=move |e| {
                        if let Some(v) = number(&event_target_value(&e), 1, 6) { set_meta(&|f| f.tier = v as u8); }
                    }/>
                </label>
                <label class="field">"Lowest level"
                    <input aria-label="Lowest level" type="number" min="1" max="20" prop:value=f.min_level.to_string() on:change=move |e| {
                        if let Some(v) = number(&event_target_value(&e), 1, 20) { set_meta(&|f| f.min_level = v as u32); }
                    }/>
                </label>
                <label class="field">"Highest level"
                    <input aria-label="Highest level" type="number" min="1" max="20" prop:value=f.max_level.to_string() on:change=move |e| {
                        if let Some(v) = number(&event_target_value(&e), 1, 20) { set_meta(&|f| f.max_level = v as u32); }
                    }/>
                </label>
            </div>
            <label class="toggle"><input type="checkbox" prop:checked=f.allow_loops
                on:change=move |e| { let v = event_target_checked(&e); set_meta(&|f| f.allow_loops = v); }/>"Allow loops"</label>
            <h3>"Regions"</h3>
            <ul class="regions">{regions}</ul>
            <button on:click=move |_| set_regions(&|rs| {
                let n = rs.len() + 1;
                let taken = |id: &str| rs.iter().any(|r| r.region_id == id);
                let id = (n..).map(|k| format!("region_{k}")).find(|id| !taken(id)).unwrap_or_default();
                rs.push(RegionFile { region_id: id, name: format!("Region {n}"), order: n as u32 });
            })>"Add region"</button>
        }
    };
    view! {
        <details class="zone-form">
            <summary>"Zone: name, tier, levels, regions"</summary>
            {form}
        </details>
    }
}

/// What the details form shows, less the selected room's place (its Column and Row follow the
/// room by themselves): the form is rebuilt only when this changes, so moving a room in a
/// 200-room zone does not rebuild a form that lists the 199 others.
#[derive(PartialEq)]
struct FormShows {
    selection: Option<Sel>,
    multi: Vec<String>,
    room: Option<NodeFile>,
    passage: Option<EdgeFile>,
    regions: Vec<RegionFile>,
    rooms: Vec<(String, String)>,
}

impl FormShows {
    fn of(state: State) -> Self {
        let selection = state.selection.get();
        let multi = state.multi.get();
        state.file(|f| {
            let nodes = f.nodes.as_deref().unwrap_or_default();
            let room = match &selection {
                Some(Sel::Room(id)) => nodes.iter().find(|n| &n.node_id == id).map(|n| NodeFile {
                    pos_x: None,
                    pos_y: None,
                    ..n.clone()
                }),
                _ => None,
            };
            let passage = match &selection {
                Some(Sel::Passage(i)) => f.edges.as_deref().unwrap_or_default().get(*i).cloned(),
                _ => None,
            };
            FormShows {
                room,
                passage,
                regions: f.regions.clone(),
                rooms: room_names(f),
                selection,
                multi,
            }
        })
    }
}

/// The form for the selected room, rooms or passage.
fn selected_view(
    state: State,
    connect_from: RwSignal<Option<String>>,
    play_from: RwSignal<Option<String>>,
    tab: RwSignal<Tab>,
) -> AnyView {
    let selection = state.selection;
    let multi = state.multi.get();
    let move_buttons = move || {
        view! {
            <p class="row move" role="group" aria-label="Move the selected rooms">
                <button aria-label="Move left" on:click=move |_| state.move_selected(-1, 0)>"←"</button>
                <button aria-label="Move up" on:click=move |_| state.move_selected(0, -1)>"↑"</button>
                <button aria-label="Move down" on:click=move |_| state.move_selected(0, 1)>"↓"</button>
                <button aria-label="Move right" on:click=move |_| state.move_selected(1, 0)>"→"</button>
            </p>
        }
    };
    match selection.get() {
        Some(Sel::Room(_)) if !multi.is_empty() => {
            let n = state.selected_rooms().len();
            view! {
                <h2>{format!("{n} rooms selected")}</h2>
                {move_buttons()}
                <p class="row">
                    <button on:click=move |_| state.multi.set(Vec::new())>"Select one"</button>
                    <button aria-keyshortcuts="Delete" on:click=move |_| { state.delete_selected(); }>{format!("Delete {n} rooms")}</button>
                </p>
            }
            .into_any()
        }
        Some(Sel::Room(id)) => {
            let Some(node) = state.room(&id) else {
                return view! { <p class="hint">"Select a room or a passage to edit it."</p> }
                    .into_any();
            };
            let set = {
                let (id, node) = (id.clone(), node.clone());
                move |change: &dyn Fn(&mut NodeFile)| {
                    // The room as it is now: the form outlives moves (see FormShows).
                    let mut room = state.room_now(&id).unwrap_or_else(|| node.clone());
                    change(&mut room);
                    state.edit(Edit::SetRoom {
                        id: id.clone(),
                        room,
                    });
                }
            };
            let text = {
                let set = set.clone();
                move |caption: &'static str, value: String, apply: fn(&mut NodeFile, String)| {
                    let set = set.clone();
                    view! {
                        <label class="field">{caption}
                            <input aria-label={caption} prop:value=value on:change=move |e| {
                                let v = event_target_value(&e);
                                set(&|r| apply(r, v.clone()));
                            }/>
                        </label>
                    }
                }
            };
            let flag = {
                let set = set.clone();
                move |caption: &'static str, value: bool, apply: fn(&mut NodeFile, bool)| {
                    let set = set.clone();
                    view! {
                        <label class="toggle"><input type="checkbox" prop:checked=value
                            on:change=move |e| { let v = event_target_checked(&e); set(&|r| apply(r, v)); }/>{caption}</label>
                    }
                }
            };
            let regions = state.file(|f| f.regions.clone());
            let known = regions.iter().any(|r| r.region_id == node.region_id);
            let mut others = state.file(room_names);
            others.retain(|(other, _)| *other != id);
            let (from, del, at) = (id.clone(), id.clone(), id.clone());
            let (set_kind, set_region, set_bias) = (set.clone(), set.clone(), set.clone());
            // The room's place now (tracked: the fields follow moves without a rebuild).
            let pos = {
                let id = id.clone();
                move || {
                    state.file(|f| {
                        let n = f.nodes.as_deref().unwrap_or_default().iter().find(|n| n.node_id == id);
                        n.map_or((0, 0), |n| (n.pos_x.unwrap_or(0), n.pos_y.unwrap_or(0)))
                    })
                }
            };
            let (pos_x, pos_y, pos_now) = (pos.clone(), pos.clone(), pos);
            let place = move |x: Option<i64>, y: Option<i64>| {
                let (px, py) = untrack(&pos_now);
                state.edit(Edit::MoveRoom {
                    id: at.clone(),
                    x: x.map_or(px, |v| v as i32),
                    y: y.map_or(py, |v| v as i32),
                });
            };
            let place_y = place.clone();
            let c = node.content.clone();
            view! {
                <h2>"Room " <code>{id.clone()}</code></h2>
                {text("Label", node.label.clone(), |r, v| r.label = v)}
                <label class="field">"Kind"
                    <select aria-label="Kind" on:change=move |e| {
                        let v = event_target_value(&e);
                        if let Some(k) = NodeKind::ALL.iter().find(|k| k.as_str() == v) {
                            let k = *k;
                            set_kind(&|r| r.kind = k);
                        }
                    }>
                        {NodeKind::ALL.iter().map(|k| view! {
                            <option value=k.as_str() selected=*k == node.kind>{kind_name(*k)}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label class="field">"Region"
                    <select aria-label="Region" on:change=move |e| {
                        let v = event_target_value(&e);
                        set_region(&|r| r.region_id = v.clone());
                    }>
                        <option value="" selected=node.region_id.is_empty()>"(none)"</option>
                        {(!known && !node.region_id.is_empty()).then(|| view! {
                            <option value=node.region_id.clone() selected=true>{format!("{} (no such region)", node.region_id)}</option>
                        })}
                        {regions.iter().map(|r| view! {
                            <option value=r.region_id.clone() selected=r.region_id == node.region_id>{format!("{} ({})", r.name, r.region_id)}</option>
                        }).collect_view()}
                    </select>
                </label>
                <div class="row">
                    {flag("Entry", node.is_entry, |r, v| r.is_entry = v)}
                    {flag("Boss", node.is_boss, |r, v| r.is_boss = v)}
                </div>
                <div class="row">
                    <label class="field">"Column"
                        <input aria-label="Column" type="number" prop:value=move || pos_x().0.to_string() on:change=move |e| {
                            place(number(&event_target_value(&e), -9999, 9999), None);
                        }/>
                    </label>
                    <label class="field">"Row"
                        <input aria-label="Row" type="number" prop:value=move || pos_y().1.to_string() on:change=move |e| {
                            place_y(None, number(&event_target_value(&e), -9999, 9999));
                        }/>
                    </label>
                </div>
                {move_buttons()}
                <details class="content">
                    <summary>"Content"</summary>
                    <label class="field">"Narration"
                        <textarea aria-label="Narration" prop:value=c.narration.clone() on:change={
                            let set = set.clone();
                            move |e| { let v = event_target_value(&e); set(&|r| r.content.narration = v.clone()); }
                        }></textarea>
                    </label>
                    {text("Encounter (bestiary id)", c.encounter_override.clone(), |r, v| r.content.encounter_override = v)}
                    {text("Harvest table", c.harvest_ref.clone(), |r, v| r.content.harvest_ref = v)}
                    {text("Grants key", c.grants_key.clone().unwrap_or_default(), |r, v| {
                        r.content.grants_key = (!v.trim().is_empty()).then(|| v.trim().to_string());
                    })}
                    <label class="field">"Loot bias"
                        <input aria-label="Loot bias" type="number" step="0.1" min="0" prop:value=c.loot_bias.to_string() on:change=move |e| {
                            if let Ok(v) = event_target_value(&e).trim().parse::<f64>()
                                && v.is_finite() && v >= 0.0
                            {
                                set_bias(&|r| r.content.loot_bias = v);
                            }
                        }/>
                    </label>
                    {flag("Allow a passage to itself", c.allow_self_loop, |r, v| r.content.allow_self_loop = v)}
                </details>
                <p class="row">
                    <button on:click=move |_| connect_from.set(Some(from.clone()))>
                        {move || if connect_from.get().is_some() { "Now select the room it leads to" } else { "Connect to…" }}
                    </button>
                    <select aria-label="Add a passage to room" on:change={
                        let id = id.clone();
                        move |e| {
                            let v = event_target_value(&e);
                            if !v.is_empty() { connect(state, &id, &v); }
                        }
                    }>
                        <option value="" selected=true>"Add a passage to…"</option>
                        {others.into_iter().map(|(oid, name)| view! { <option value=oid>{name}</option> }).collect_view()}
                    </select>
                </p>
                <p class="row">
                    <button on:click={
                        let id = id.clone();
                        move |_| { play_from.set(Some(id.clone())); tab.set(Tab::Playtest); }
                    }>"Playtest from here"</button>
                    <button on:click=move |_| {
                        selection.set(None);
                        state.edit(Edit::DeleteRoom { id: del.clone() });
                    }>"Delete room"</button>
                </p>
            }
            .into_any()
        }
        Some(Sel::Passage(index)) => {
            let Some(edge) = state.file(|f| f.edges.as_deref().unwrap_or_default().get(index).cloned())
            else {
                return view! { <p class="hint">"Select a room or a passage to edit it."</p> }
                    .into_any();
            };
            passage_form(state, index, edge)
        }
        None => view! {
            <p class="hint">"Select a room or a passage to edit it. \"Add room\" puts a room of the chosen kind beside the selected one; drag a room onto another, or \"Connect to…\" then a second room, to add a passage."</p>
        }
        .into_any(),
    }
}

/// The selected passage's form: its ends, lock kind and data, hint and weight.
fn passage_form(state: State, index: usize, edge: EdgeFile) -> AnyView {
    let set = {
        let edge = edge.clone();
        move |change: &dyn Fn(&mut EdgeFile)| {
            let mut e = edge.clone();
            change(&mut e);
            state.edit(Edit::SetPassage { index, edge: e });
        }
    };
    let rooms = state.file(room_names);
    let end = {
        let set = set.clone();
        move |caption: &'static str, current: String, to: bool| {
            let set = set.clone();
            view! {
                <label class="field">{caption}
                    <select aria-label={caption} on:change=move |e| {
                        let v = event_target_value(&e);
                        set(&|p| if to { p.to_node = v.clone() } else { p.from_node = v.clone() });
                    }>
                        {rooms.iter().map(|(id, name)| view! {
                            <option value=id.clone() selected=*id == current>{name.clone()}</option>
                        }).collect_view()}
                    </select>
                </label>
            }
        }
    };
    // One field per key of the lock's data (the kind's keys, and any others the file has).
    let mut keys: Vec<String> = editor::default_lock_data(edge.lock_kind)
        .into_keys()
        .collect();
    keys.extend(
        edge.lock_data
            .keys()
            .filter(|k| !keys.contains(k))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let defaults = editor::default_lock_data(edge.lock_kind);
    let data_fields = keys
        .into_iter()
        .map(|k| {
            let value = edge.lock_data.get(&k).or_else(|| defaults.get(&k)).cloned().unwrap_or_default();
            let set = set.clone();
            let caption = lock_data_caption(&k);
            if k == "stat" {
                let current = value.as_str().unwrap_or("").to_string();
                return view! {
                    <label class="field">{caption.clone()}
                        <select aria-label={caption} on:change=move |e| {
                            let v = event_target_value(&e);
                            set(&|p| { p.lock_data.insert("stat".into(), v.clone().into()); });
                        }>
                            {zonegraph_core::zone::Ability::ALL.iter().map(|a| {
                                let s = a.as_str();
                                view! { <option value=s selected=s == current>{a.name()}</option> }
                            }).collect_view()}
                        </select>
                    </label>
                }
                .into_any();
            }
            let numeric = value.is_number();
            let shown = match &value {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            view! {
                <label class="field">{caption.clone()}
                    <input aria-label={caption} type=if numeric { "number" } else { "text" } prop:value=shown on:change=move |e| {
                        let v = event_target_value(&e);
                        let value: serde_json::Value = if numeric {
                            match v.trim().parse::<i64>() { Ok(n) => n.into(), Err(_) => return }
                        } else {
                            v.trim().into()
                        };
                        let k = k.clone();
                        set(&|p| { p.lock_data.insert(k.clone(), value.clone()); });
                    }/>
                </label>
            }
            .into_any()
        })
        .collect_view();
    let (set_lock, set_hint, set_weight) = (set.clone(), set.clone(), set);
    let selection = state.selection;
    view! {
        <h2>"Passage " {edge.from_node.clone()} " → " {edge.to_node.clone()}</h2>
        {end("From", edge.from_node.clone(), false)}
        {end("To", edge.to_node.clone(), true)}
        <label class="field">"Lock"
            <select aria-label="Lock" on:change=move |e| {
                let v = event_target_value(&e);
                if let Some(k) = LockKind::ALL.iter().find(|k| lock_name(**k) == v) {
                    let k = *k;
                    set_lock(&|p| {
                        p.lock_kind = k;
                        p.lock_data = editor::default_lock_data(k);
                    });
                }
            }>
                {LockKind::ALL.iter().map(|k| view! {
                    <option value=lock_name(*k) selected=*k == edge.lock_kind>{lock_name(*k)}</option>
                }).collect_view()}
            </select>
        </label>
        {data_fields}
        <label class="field">"Hint"
            <input aria-label="Hint" prop:value=edge.hint.clone() on:change=move |e| {
                let v = event_target_value(&e);
                set_hint(&|p| p.hint = v.clone());
            }/>
        </label>
        <label class="field">"Weight (menu order at a fork)"
            <input aria-label="Weight (menu order at a fork)" type="number" prop:value=edge.weight.to_string() on:change=move |e| {
                if let Some(v) = number(&event_target_value(&e), -1000, 1000) {
                    set_weight(&|p| p.weight = v as i32);
                }
            }/>
        </label>
        <p class="row">
            <button on:click=move |_| {
                selection.set(None);
                state.edit(Edit::DeletePassage { index });
            }>"Delete passage"</button>
        </p>
    }
    .into_any()
}

/// A lock data key in words.
fn lock_data_caption(key: &str) -> String {
    match key {
        "dc" => "Difficulty (DC)".into(),
        "key_id" => "Key id".into(),
        "min_level" => "Lowest level".into(),
        "region_id" => "Region to clear".into(),
        "stat" => "Ability".into(),
        k => format!("Lock data: {k}"),
    }
}
