//! The selected passage's form: its ends, lock kind and data, hint and weight.

use leptos::prelude::*;
use zonegraph_core::format::{EdgeFile, LockKind};

use super::state::State;
use crate::editor::{self, Edit};
use crate::names::lock_name;

/// The form of passage `index`, which is `edge` as the form opens.
pub(super) fn form(state: State, index: usize, edge: EdgeFile) -> AnyView {
    let set = {
        let edge = edge.clone();
        move |change: &dyn Fn(&mut EdgeFile)| {
            let mut e = edge.clone();
            change(&mut e);
            state.edit(Edit::SetPassage { index, edge: e });
        }
    };
    let rooms = state.file(editor::room_names);
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
    let data_fields = editor::lock_fields(&edge)
        .into_iter()
        .map(|(k, value)| {
            let set = set.clone();
            let caption = editor::lock_data_caption(&k);
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
                if let Some(v) = editor::form_number(&event_target_value(&e), -1000, 1000) {
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
