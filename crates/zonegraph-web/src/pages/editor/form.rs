//! The details form: what is selected — one room ([`super::room`]), several, or a passage
//! ([`super::passage`]) — and the hint when nothing is.

use leptos::prelude::*;
use zonegraph_core::format::{EdgeFile, NodeFile, RegionFile};

use super::Tab;
use super::state::State;
use super::{passage, room};
use crate::editor;
use crate::map::Sel;

/// What the details form shows, less the selected room's place (its Column and Row follow the
/// room by themselves): the form is rebuilt only when this changes, so moving a room in a
/// 200-room zone does not rebuild a form that lists the 199 others.
#[derive(PartialEq)]
pub(super) struct FormShows {
    selection: Option<Sel>,
    multi: Vec<String>,
    room: Option<NodeFile>,
    passage: Option<EdgeFile>,
    regions: Vec<RegionFile>,
    rooms: Vec<(String, String)>,
}

impl FormShows {
    pub fn of(state: State) -> Self {
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
                rooms: editor::room_names(f),
                selection,
                multi,
            }
        })
    }
}

/// The buttons that move the selected rooms by a cell.
pub(super) fn move_buttons(state: State) -> impl IntoView {
    view! {
        <p class="row move" role="group" aria-label="Move the selected rooms">
            <button aria-label="Move left" on:click=move |_| state.move_selected(-1, 0)>"←"</button>
            <button aria-label="Move up" on:click=move |_| state.move_selected(0, -1)>"↑"</button>
            <button aria-label="Move down" on:click=move |_| state.move_selected(0, 1)>"↓"</button>
            <button aria-label="Move right" on:click=move |_| state.move_selected(1, 0)>"→"</button>
        </p>
    }
}

/// The form for the selected room, rooms or passage.
pub(super) fn selected_view(
    state: State,
    connect_from: RwSignal<Option<String>>,
    play_from: RwSignal<Option<String>>,
    tab: RwSignal<Tab>,
) -> AnyView {
    let selection = state.selection;
    let multi = state.multi.get();
    match selection.get() {
        Some(Sel::Room(_)) if !multi.is_empty() => {
            let n = state.selected_rooms().len();
            view! {
                <h2>{format!("{n} rooms selected")}</h2>
                {move_buttons(state)}
                <p class="row">
                    <button on:click=move |_| state.multi.set(Vec::new())>"Select one"</button>
                    <button aria-keyshortcuts="Delete" on:click=move |_| { state.delete_selected(); }>{format!("Delete {n} rooms")}</button>
                </p>
            }
            .into_any()
        }
        Some(Sel::Room(id)) => {
            let Some(node) = state.room(&id) else {
                return nothing_selected();
            };
            room::form(state, id, node, connect_from, play_from, tab)
        }
        Some(Sel::Passage(index)) => {
            let Some(edge) = state.file(|f| f.edges.as_deref().unwrap_or_default().get(index).cloned())
            else {
                return nothing_selected();
            };
            passage::form(state, index, edge)
        }
        None => view! {
            <p class="hint">"Select a room or a passage to edit it. \"Add room\" puts a room of the chosen kind beside the selected one; drag a room onto another, or \"Connect to…\" then a second room, to add a passage."</p>
        }
        .into_any(),
    }
}

/// What the form says when the selection names nothing the file has.
fn nothing_selected() -> AnyView {
    view! { <p class="hint">"Select a room or a passage to edit it."</p> }.into_any()
}
