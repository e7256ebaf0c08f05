//! The editor's toolbar over the map: the zone's name and size, the kind and "Add room",
//! undo and redo (and their keys), and the buttons that download, share, discard or
//! publish the work.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use zonegraph_core::format::NodeKind;

use super::state::State;
use super::{autosave, publish};
use crate::editor::{self, Edit, Editor};
use crate::map::Sel;
use crate::names::kind_name;

/// The toolbar; `sharing` and `publishing` show the share link and the publish form.
pub(super) fn view(
    state: State,
    sharing: RwSignal<bool>,
    publishing: RwSignal<bool>,
) -> impl IntoView {
    let selection = state.selection;
    let kind = RwSignal::new(NodeKind::Exploration);
    let add_room = move |_| {
        let (id, x, y) = state.editor.with_untracked(|e| {
            let id = e.new_room_id(kind.get_untracked());
            let near = match selection.get_untracked() {
                Some(Sel::Room(sel)) => Some(sel),
                _ => None,
            };
            let (x, y) = editor::new_room_place(e.file(), near.as_deref());
            (id, x, y)
        });
        let k = kind.get_untracked();
        if state.edit(Edit::AddRoom(editor::room(&id, k, kind_name(k), x, y))) {
            state.multi.set(Vec::new());
            selection.set(Some(Sel::Room(id)));
        }
    };
    view! {
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
            <button on:click=move |_| state.undo() title="Ctrl+Z" disabled=move || !state.editor.with(Editor::can_undo)>"Undo"</button>
            <button on:click=move |_| state.redo() title="Ctrl+Shift+Z" disabled=move || !state.editor.with(Editor::can_redo)>"Redo"</button>
            <button on:click=move |_| publish::download(state)>"Download"</button>
            <button on:click=move |_| sharing.update(|s| *s = !*s)
                aria-expanded=move || sharing.get().to_string()>"Share link"</button>
            <button on:click=move |_| autosave::discard(state)>"Discard"</button>
            <button on:click=move |_| publishing.update(|p| *p = !*p)
                aria-expanded=move || publishing.get().to_string()>"Publish…"</button>
        </div>
    }
}

/// Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y; Delete or Backspace deletes the selected rooms (or
/// passage); except while typing in a field. Listens on the window while the page is open.
pub(super) fn shortcuts(state: State) {
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
            ("z", false) => state.undo(),
            ("z", true) | ("y", _) => state.redo(),
            _ => return,
        }
        e.prevent_default();
    });
    on_cleanup(move || keys.remove());
}
