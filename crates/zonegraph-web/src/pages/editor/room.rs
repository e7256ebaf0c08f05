//! The selected room's form: label, kind, region, entry and boss, place, content, and the
//! buttons that connect it, playtest from it or delete it.

use leptos::prelude::*;
use zonegraph_core::format::{NodeFile, NodeKind};

use super::Tab;
use super::form::move_buttons;
use super::state::State;
use crate::editor::{self, Edit};
use crate::names::kind_name;

/// The form of room `id`, which is `node` as the form opens.
pub(super) fn form(
    state: State,
    id: String,
    node: NodeFile,
    connect_from: RwSignal<Option<String>>,
    play_from: RwSignal<Option<String>>,
    tab: RwSignal<Tab>,
) -> AnyView {
    let selection = state.selection;
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
    let mut others = state.file(editor::room_names);
    others.retain(|(other, _)| *other != id);
    let (from, del, at) = (id.clone(), id.clone(), id.clone());
    let (set_kind, set_region, set_bias) = (set.clone(), set.clone(), set.clone());
    // The room's place now (tracked: the fields follow moves without a rebuild).
    let pos = {
        let id = id.clone();
        move || {
            state.file(|f| {
                let n = f
                    .nodes
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .find(|n| n.node_id == id);
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
    let rename_from = id.clone();
    let rename = move |e: leptos::ev::Event| {
        let to = event_target_value(&e).trim().to_string();
        let from = rename_from.clone();
        if to != from
            && state.edit(Edit::RenameRoom {
                from,
                to: to.clone(),
            })
        {
            // The selection follows the room to its new id (one undo takes both back).
            selection.set(Some(crate::map::Sel::Room(to)));
        }
    };
    view! {
        <h2>"Room " <code>{id.clone()}</code></h2>
        <label class="field">"Room id"
            <input aria-label="Room id" prop:value=id.clone() on:change=rename
                title="Renaming a room renames its passages' ends too"/>
        </label>
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
                    place(editor::form_number(&event_target_value(&e), -9999, 9999), None);
                }/>
            </label>
            <label class="field">"Row"
                <input aria-label="Row" type="number" prop:value=move || pos_y().1.to_string() on:change=move |e| {
                    place_y(None, editor::form_number(&event_target_value(&e), -9999, 9999));
                }/>
            </label>
        </div>
        {move_buttons(state)}
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
                <input aria-label="Loot bias" type="number" step="0.1" min="0" prop:value=zonegraph_core::text::decimal(c.loot_bias) on:change=move |e| {
                    if let Some(v) = editor::form_decimal(&event_target_value(&e))
                        && v >= 0.0
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
                    if !v.is_empty() { state.connect(&id, &v); }
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
