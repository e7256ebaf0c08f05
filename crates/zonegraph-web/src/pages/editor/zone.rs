//! The zone's form: its id (proposed from its name while it follows the name, checked as
//! the server checks a zone file's name), name, tier, level range, whether loops are allowed, and its regions.

use leptos::prelude::*;
use zonegraph_core::format::{RegionFile, ZoneFile};

use super::state::State;
use crate::editor::{self, Edit, form_number};

/// The zone's metadata and regions.
#[component]
pub(super) fn ZoneForm(state: State) -> impl IntoView {
    let set_meta = move |change: &dyn Fn(&mut ZoneFile)| {
        let mut f = state.editor.with_untracked(|e| e.file().clone());
        change(&mut f);
        state.edit(Edit::SetMeta {
            zone_id: f.zone_id,
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
    // Why the id typed last was refused (shown under the field until a good one is typed).
    let id_problem = RwSignal::new(None::<String>);
    let set_id = move |v: String| match editor::zone_id_problem(&v) {
        Some(why) => id_problem.set(Some(format!("Not a zone id: {why}."))),
        None => {
            id_problem.set(None);
            set_meta(&|f| f.zone_id = v.clone());
        }
    };
    let set_name = move |v: String| {
        set_meta(&|f| {
            // A new zone's id follows its name until the designer types one.
            if editor::id_follows_name(&f.zone_id, &f.name) {
                f.zone_id = editor::propose_zone_id(&v, shipped_id);
            }
            f.name = v.clone();
        })
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
                            on:change=move |e| if let Some(v) = form_number(&event_target_value(&e), 1, 999) {
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
                    set_name(event_target_value(&e));
                }/>
            </label>
            <label class="field">"Zone id"
                <input aria-label="Zone id" prop:value=f.zone_id.clone()
                    title="The server serves one zone per id: publishing an id it serves replaces that zone"
                    on:change=move |e| set_id(event_target_value(&e).trim().to_string())/>
            </label>
            {move || id_problem.get().map(|p| view! { <p class="error zone-id-problem" role="alert">{p}</p> })}
            <div class="row">
                <label class="field">"Tier"
                    <input aria-label="Tier" type="number" min="1" max="6" prop:value=f.tier.to_string() on:change=move |e| {
                        if let Some(v) = form_number(&event_target_value(&e), 1, 6) { set_meta(&|f| f.tier = v as u8); }
                    }/>
                </label>
                <label class="field">"Lowest level"
                    <input aria-label="Lowest level" type="number" min="1" max="20" prop:value=f.min_level.to_string() on:change=move |e| {
                        if let Some(v) = form_number(&event_target_value(&e), 1, 20) { set_meta(&|f| f.min_level = v as u32); }
                    }/>
                </label>
                <label class="field">"Highest level"
                    <input aria-label="Highest level" type="number" min="1" max="20" prop:value=f.max_level.to_string() on:change=move |e| {
                        if let Some(v) = form_number(&event_target_value(&e), 1, 20) { set_meta(&|f| f.max_level = v as u32); }
                    }/>
                </label>
            </div>
            <label class="toggle"><input type="checkbox" prop:checked=f.allow_loops
                on:change=move |e| { let v = event_target_checked(&e); set_meta(&|f| f.allow_loops = v); }/>"Allow loops"</label>
            <h3>"Regions"</h3>
            <ul class="regions">{regions}</ul>
            <button on:click=move |_| set_regions(&|rs| {
                let region = editor::new_region(rs);
                rs.push(region);
            })>"Add region"</button>
        }
    };
    view! {
        <details class="zone-form" open>
            <summary>"Zone: id, name, tier, levels, regions"</summary>
            {form}
        </details>
    }
}

/// Whether a zone shipped with the build has id `id` (a new zone's proposed id avoids them).
pub(super) fn shipped_id(id: &str) -> bool {
    crate::zones::shipped(id).is_some()
}
