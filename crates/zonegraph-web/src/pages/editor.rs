//! The zone editor's page (`#edit`): the [`Editor`] model drawn on the map, with controls to
//! add, connect, edit and delete rooms and passages, undo and redo, the core's findings after
//! every edit, autosave to local storage (restored on the next visit until discarded) and
//! download as a zone file.

use std::sync::Arc;

use leptos::prelude::*;
use zonegraph_core::format::{LockKind, NodeKind};

use crate::doc::{self, Loaded};
use crate::editor::{self, Edit, Editor};
use crate::map::{MapView, Sel};
use crate::model::{self, MapModel, kind_name, lock_name};

use crate::browser;

/// Where the work in progress is kept between visits.
pub const AUTOSAVE_KEY: &str = "zonegraph-editor";

/// The editor's state: the model, and what the map and panels draw from it.
#[derive(Clone, Copy)]
struct State {
    editor: RwSignal<Editor>,
    loaded: RwSignal<Arc<Loaded>>,
    map: RwSignal<Arc<MapModel>>,
    note: RwSignal<String>,
}

impl State {
    /// Redraws from the model and saves it (after every edit, undo and redo).
    fn refresh(self) {
        let (loaded, json) = self.editor.with_untracked(|e| {
            (
                Arc::new(doc::generated(&editor::file_name(e.file()), e.file())),
                e.to_json(),
            )
        });
        self.map
            .set(Arc::new(model::build(&loaded.zone, &loaded.layout, None)));
        self.loaded.set(loaded);
        browser::storage_set(AUTOSAVE_KEY, &json);
    }

    fn edit(self, edit: Edit) {
        let result = self.editor.try_update(|e| e.apply(edit));
        match result {
            Some(Ok(())) => {
                self.note.set(String::new());
                self.refresh();
            }
            Some(Err(why)) => self.note.set(format!("Not done: {why}.")),
            None => {}
        }
    }
}

/// The work saved by the last visit, if any.
fn restore() -> Option<Editor> {
    let text = browser::storage_get(AUTOSAVE_KEY)?;
    zonegraph_core::format::parse(&text).ok().map(Editor::new)
}

/// The editor page.
#[component]
pub fn EditorPage() -> impl IntoView {
    let restored = restore();
    let was_restored = restored.is_some();
    let start = restored.unwrap_or_else(|| Editor::empty("new_zone", "New zone"));
    let first = Arc::new(doc::generated("new_zone.json", start.file()));
    let state = State {
        map: RwSignal::new(Arc::new(model::build(&first.zone, &first.layout, None))),
        loaded: RwSignal::new(first),
        editor: RwSignal::new(start),
        note: RwSignal::new(if was_restored {
            "Restored your last work from this browser.".into()
        } else {
            String::new()
        }),
    };
    let selection = RwSignal::new(None::<Sel>);
    let kind = RwSignal::new(NodeKind::Exploration);
    // "Connect": the room a new passage starts from; the next room selected ends it.
    let connect_from = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(Sel::Room(to)) = selection.get() else {
            return;
        };
        if let Some(from) = connect_from.get_untracked() {
            connect_from.set(None);
            if from != to {
                state.edit(Edit::Connect(editor::passage(&from, &to)));
            }
        }
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
        state.edit(Edit::AddRoom(editor::room(&id, k, kind_name(k), x, y)));
        selection.set(Some(Sel::Room(id)));
    };
    let undo = move |_| {
        if state.editor.try_update(Editor::undo) == Some(true) {
            selection.set(None);
            state.refresh();
        }
    };
    let redo = move |_| {
        if state.editor.try_update(Editor::redo) == Some(true) {
            selection.set(None);
            state.refresh();
        }
    };
    let download = move |_| {
        let (name, json) = state
            .editor
            .with_untracked(|e| (editor::file_name(e.file()), e.to_json()));
        if let Err(e) = browser::download(&name, "application/json", &json) {
            state.note.set(format!("The download failed: {e}"));
        }
    };
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
    let discard = move |_| {
        browser::storage_remove(AUTOSAVE_KEY);
        state.editor.set(Editor::empty("new_zone", "New zone"));
        selection.set(None);
        state.refresh();
        state.note.set("Discarded: a new zone.".into());
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
    let findings = move || {
        state.loaded.with(|l| {
            l.diagnostics
                .iter()
                .map(|d| {
                    let node = d.node.clone();
                    let sev = if d.is_error() { "error" } else { "warning" };
                    view! {
                        <li>
                            <button class=format!("diag {sev}") on:click=move |_| {
                                if let Some(n) = &node {
                                    selection.set(Some(Sel::Room(n.clone())));
                                }
                            }>
                                <span class="sev">{sev}</span>
                                <span class="msg">{d.message.clone()}</span>
                            </button>
                        </li>
                    }
                })
                .collect_view()
        })
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
                    <button on:click=undo disabled=move || !state.editor.with(Editor::can_undo)>"Undo"</button>
                    <button on:click=redo disabled=move || !state.editor.with(Editor::can_redo)>"Redo"</button>
                    <button on:click=download>"Download"</button>
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
                <p class="meta editor-note" role="status">{move || state.note.get()}</p>
                <MapView model=state.map zone_name=name file_stem=stem selection=selection/>
            </section>
            <aside class="side">
                <section class="details">
                    {move || selected_view(state, selection, connect_from)}
                </section>
                <h2>"Checks"</h2>
                <p class="check-counts">{counts}</p>
                <ul class="diagnostics">{findings}</ul>
            </aside>
        </div>
    }
}

/// The form for the selected room or passage.
fn selected_view(
    state: State,
    selection: RwSignal<Option<Sel>>,
    connect_from: RwSignal<Option<String>>,
) -> AnyView {
    match selection.get() {
        Some(Sel::Room(id)) => {
            let Some(node) = state.editor.with(|e| {
                e.file()
                    .nodes
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .find(|n| n.node_id == id)
                    .cloned()
            }) else {
                return view! { <p class="hint">"Select a room or a passage to edit it."</p> }
                    .into_any();
            };
            let set = {
                let (id, node) = (id.clone(), node.clone());
                move |change: &dyn Fn(&mut zonegraph_core::format::NodeFile)| {
                    let mut room = node.clone();
                    change(&mut room);
                    state.edit(Edit::SetRoom {
                        id: id.clone(),
                        room,
                    });
                }
            };
            let (set_label, set_kind, set_entry, set_boss) =
                (set.clone(), set.clone(), set.clone(), set);
            let (from, del) = (id.clone(), id.clone());
            view! {
                <h2>"Room " <code>{id.clone()}</code></h2>
                <label class="field">"Label"
                    <input prop:value=node.label.clone() on:change=move |e| {
                        let v = event_target_value(&e);
                        set_label(&|r| r.label = v.clone());
                    }/>
                </label>
                <label class="field">"Kind"
                    <select on:change=move |e| {
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
                <label class="toggle"><input type="checkbox" prop:checked=node.is_entry
                    on:change=move |e| { let v = event_target_checked(&e); set_entry(&|r| r.is_entry = v); }/>"Entry"</label>
                <label class="toggle"><input type="checkbox" prop:checked=node.is_boss
                    on:change=move |e| { let v = event_target_checked(&e); set_boss(&|r| r.is_boss = v); }/>"Boss"</label>
                <p class="row">
                    <button on:click=move |_| connect_from.set(Some(from.clone()))>
                        {move || if connect_from.get().is_some() { "Now select the room it leads to" } else { "Connect to…" }}
                    </button>
                    <button on:click=move |_| {
                        selection.set(None);
                        state.edit(Edit::DeleteRoom { id: del.clone() });
                    }>"Delete room"</button>
                </p>
            }
            .into_any()
        }
        Some(Sel::Passage(index)) => {
            let Some(edge) = state.editor.with(|e| {
                e.file()
                    .edges
                    .as_deref()
                    .unwrap_or_default()
                    .get(index)
                    .cloned()
            }) else {
                return view! { <p class="hint">"Select a room or a passage to edit it."</p> }
                    .into_any();
            };
            let set = {
                let edge = edge.clone();
                move |change: &dyn Fn(&mut zonegraph_core::format::EdgeFile)| {
                    let mut e = edge.clone();
                    change(&mut e);
                    state.edit(Edit::SetPassage { index, edge: e });
                }
            };
            let (set_lock, set_hint) = (set.clone(), set);
            view! {
                <h2>"Passage " {edge.from_node.clone()} " → " {edge.to_node.clone()}</h2>
                <label class="field">"Lock"
                    <select on:change=move |e| {
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
                <label class="field">"Hint"
                    <input prop:value=edge.hint.clone() on:change=move |e| {
                        let v = event_target_value(&e);
                        set_hint(&|p| p.hint = v.clone());
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
        None => view! {
            <p class="hint">"Select a room or a passage to edit it. \"Add room\" puts a room of the chosen kind beside the selected one; \"Connect to…\" then a second room adds a passage."</p>
        }
        .into_any(),
    }
}
