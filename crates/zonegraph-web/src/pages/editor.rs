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
//!
//! This module lays the page out; its parts draw the `state` and turn clicks into edits:
//! the `toolbar`, the `canvas` (the map and its pointer actions, with the `marks` over it),
//! the details `form` (`room`, `passage`), the `zone`'s form, the side `tabs` with the
//! `changes` against the version opened, the `insight` of the server's runs (a tab and a map
//! layer) and the `playtest`, `publish` (download, share link, publish) and the `autosave`. What can be
//! decided without a browser is the [`crate::editor`] model's.

mod autosave;
mod canvas;
mod changes;
mod form;
mod insight;
mod marks;
mod passage;
mod playtest;
mod publish;
mod room;
mod state;
mod tabs;
mod toolbar;
mod zone;

use std::sync::Arc;

use leptos::prelude::*;

use crate::browser;
use crate::editor::Editor;
use crate::map::Sel;
use crate::model;
use form::FormShows;
use playtest::Playtesting;
use state::State;

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
    Changes,
    Insight,
    Playtest,
}

/// The work the page opens on and what its note says: `open` (the work it replaces kept as
/// the previous work), else the work saved here, else a new zone.
fn start(open: Option<Result<Opened, String>>) -> (Editor, String) {
    let mut note = String::new();
    let start = match open {
        Some(Ok(o)) => match Editor::open_text(&o.text) {
            Ok(e) => {
                if autosave::keep_as_previous() {
                    note = format!(
                        "Opened {}. The work it replaced is kept: \"Bring back previous work\" restores it.",
                        o.name
                    );
                } else {
                    note = format!("Opened {}.", o.name);
                }
                autosave::save(e.file());
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
        let r = autosave::restore(AUTOSAVE_KEY);
        if r.is_some() && note.is_empty() {
            note = "Restored your last work from this browser.".into();
        }
        r
    });
    let start = start.unwrap_or_else(|| Editor::empty("new_zone", "New zone"));
    (start, note)
}

/// The editor page, on the work saved here, or on `open` (the work it replaces is kept).
#[component]
pub fn EditorPage(#[prop(optional)] open: Option<Result<Opened, String>>) -> impl IntoView {
    // Work still waiting for its autosave (a page being replaced) is written first.
    autosave::now();
    on_cleanup(autosave::now);
    let (start, note) = start(open);
    let state = State::new(start, note);
    let selection = state.selection;
    let tab = RwSignal::new(Tab::Checks);
    let has_previous = RwSignal::new(autosave::has_previous());
    // "Connect": the room a new passage starts from; the next room selected ends it.
    let connect_from = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(Sel::Room(to)) = selection.get() else {
            return;
        };
        if let Some(from) = connect_from.get_untracked() {
            connect_from.set(None);
            if from != to {
                state.connect(&from, &to);
            }
        }
    });

    // The playtest: from a chosen room, with the designer's character form and transcript.
    let playtest = Playtesting::new(state);

    let form_shows = Memo::new(move |_| FormShows::of(state));
    let map_model = Memo::new(move |_| {
        let l = state.loaded.get();
        let run = if tab.get() == Tab::Playtest {
            playtest.run()
        } else {
            None
        };
        Arc::new(model::build(&l.zone, &l.layout, run.as_ref()))
    });
    insight::layer(state, map_model, move || tab.get() == Tab::Insight);
    toolbar::shortcuts(state);
    // Publishing and the share link, shown from the toolbar.
    let sharing = RwSignal::new(false);
    let publishing = RwSignal::new(false);
    let bring_back = move |_| {
        autosave::bring_back(state);
        has_previous.set(autosave::has_previous());
    };

    let name = state.editor.with_untracked(|e| e.file().name.clone());
    let stem = state.editor.with_untracked(|e| e.file().zone_id.clone());
    let play_from = playtest.from;
    view! {
        <div class="designer editor">
            <section class="map-pane">
                {toolbar::view(state, sharing, publishing)}
                {publish::form(state, publishing)}
                {publish::share_link(state, sharing)}
                <p class="meta editor-note" role="status">
                    {move || state.note.get()}
                    {move || has_previous.get().then(|| view! {
                        " " <button class="link" on:click=bring_back>"Bring back previous work"</button>
                    })}
                </p>
                {canvas::view(state, map_model, name, stem)}
                <p class="hint">"Drag a room to place it; drop it on another room to connect them. Shift-click selects more rooms. Keyboard: Tab to a room, Enter selects it, Shift+arrow keys move the selected rooms, Delete deletes them."</p>
            </section>
            <aside class="side">
                <section class="details">
                    // Read, not only tracked: a memo nobody read has not computed, so has no
                    // sources to tell it of a change.
                    {move || form_shows.with(|_| untrack(|| form::selected_view(state, connect_from, play_from, tab)))}
                </section>
                <zone::ZoneForm state=state/>
                {tabs::view(state, tab, playtest)}
            </aside>
        </div>
    }
}
