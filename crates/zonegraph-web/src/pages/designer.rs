//! The designer's preview of one zone: the map with "View as player" and sharing, the details
//! panel, and the tabs (playtest, diagnostics, stats).

pub(crate) mod diagnostics;
pub(crate) mod playtest;
pub(crate) mod stats;

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::doc::Loaded;
use crate::map::{MapView, Sel};
use crate::playtest::Playtest;
use crate::views::{Problem, capitalise, details_view};
use crate::{browser, model, player, share};

/// The designer for a loaded zone, or what is wrong with it.
pub fn preview(file: &str, loaded: Result<Loaded, String>, shared: bool) -> AnyView {
    match loaded {
        Ok(loaded) => view! { <Designer loaded=Arc::new(loaded) shared=shared/> }.into_any(),
        Err(e) => view! {
            <Problem title=format!("{file} is not a zone this viewer can read") message=e/>
        }
        .into_any(),
    }
}

/// The side panel's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Playtest,
    Diagnostics,
    Stats,
}

/// The designer's preview of one zone.
#[component]
fn Designer(loaded: Arc<Loaded>, shared: bool) -> impl IntoView {
    let zone = Arc::new(loaded.zone.clone());
    let layout = Arc::new(loaded.layout.clone());
    let selection = RwSignal::new(None::<Sel>);
    let as_player = RwSignal::new(false);
    let tab = RwSignal::new(Tab::Playtest);
    let play = RwSignal::new(Playtest::default());
    let run_id = RwSignal::new("playtest-1".to_string());
    let share_link = RwSignal::new(None::<Result<String, String>>);

    let run = Signal::derive(move || play.with(|p| p.run().cloned()));
    // "View as player": the core's player view of the playtest (the one owner of what a
    // player may see); the map and the details panel then draw from it alone.
    let seen = {
        let zone = zone.clone();
        Memo::new(move |_| {
            as_player.get().then(|| {
                play.with(|p| Arc::new(player::preview(&zone, p.run(), &p.player.character)))
            })
        })
    };
    let map_model = {
        let (zone, layout) = (zone.clone(), layout.clone());
        Memo::new(move |_| {
            Arc::new(match seen.get() {
                Some(view) => model::build_player(&view, &player::lay_out(&view)),
                None => model::build(&zone, &layout, run.get().as_ref()),
            })
        })
    };
    let exec = {
        let zone = zone.clone();
        move |text: String| {
            let id = run_id.get_untracked();
            play.update(|p| p.command(&zone, &text, &id));
        }
    };
    let on_option = {
        let exec = exec.clone();
        Callback::new(move |n: usize| exec(format!("go {n}")))
    };

    let text = loaded.text.clone();
    let share = move |_| {
        let text = text.clone();
        leptos::task::spawn_local(async move {
            let result = if text.is_empty() {
                Err("A generated zone has no file to share.".to_string())
            } else {
                share::encode_share(&text)
                    .await
                    .map(|f| format!("{}#{f}", browser::base_url()))
                    .map_err(|e| capitalise(&e.to_string()))
            };
            if let Ok(link) = &result {
                browser::copy(link);
            }
            share_link.set(Some(result));
        });
    };

    let z = &loaded.zone;
    let meta = format!(
        "tier {} · levels {}–{} · {} rooms · {} passages{}",
        z.tier,
        z.min_level,
        z.max_level,
        z.graph.node_count(),
        z.graph.edge_count(),
        if shared { " · from a share link" } else { "" }
    );
    let diag_count = loaded.diagnostics.len();
    let errors = loaded.diagnostics.iter().filter(|d| d.is_error()).count();

    let details = {
        let zone = zone.clone();
        move || {
            let sel = selection.get();
            let r = run.get();
            let rows = match (&sel, seen.get()) {
                (Some(Sel::Room(id)), Some(view)) => player::room_details(&view, id),
                (Some(Sel::Passage(i)), Some(view)) => player::passage_details(&view, *i),
                (Some(Sel::Room(id)), None) => model::room_details(&zone, r.as_ref(), id),
                (Some(Sel::Passage(i)), None) => model::passage_details(&zone, r.as_ref(), *i),
                (None, _) => Vec::new(),
            };
            details_view(rows, sel.is_some())
        }
    };

    let tab_button = move |t: Tab, label: String| {
        view! {
            <button role="tab" aria-selected=move || (tab.get() == t).to_string()
                class:active=move || tab.get() == t on:click=move |_| tab.set(t)>{label}</button>
        }
    };
    let panel = {
        let loaded = loaded.clone();
        let zone = zone.clone();
        move || {
            match tab.get() {
            Tab::Playtest => view! {
                <playtest::PlaytestPanel zone=zone.clone() play=play run_id=run_id exec=Callback::new({
                    let exec = exec.clone();
                    move |t: String| exec(t)
                })/>
            }
            .into_any(),
            Tab::Diagnostics => diagnostics::view(&loaded, selection).into_any(),
            Tab::Stats => stats::view(&loaded).into_any(),
        }
        }
    };

    view! {
        <div class="designer">
            <section class="map-pane">
                <div class="zone-head">
                    <div>
                        <h1>{z.name.clone()}</h1>
                        <p class="meta">{meta}</p>
                    </div>
                    <span class="spacer"></span>
                    <label class="toggle">
                        <input type="checkbox" prop:checked=move || as_player.get()
                            on:change=move |e| {
                                // Passages are numbered differently on the two maps.
                                selection.set(None);
                                as_player.set(event_target_checked(&e));
                            }/>
                        "View as player"
                    </label>
                    {(!loaded.text.is_empty()).then(|| {
                        let text = loaded.text.clone();
                        view! {
                            <button on:click=move |_| {
                                // The editor opens what it finds saved: never over work
                                // without asking.
                                let key = crate::pages::editor::AUTOSAVE_KEY;
                                if browser::storage_get(key).is_none()
                                    || browser::confirm("Replace the zone in the editor with a copy of this one?")
                                {
                                    // A copy has its own id, so publishing it never
                                    // replaces the zone it was copied from.
                                    let copy = crate::editor::Editor::open_text(&text)
                                        .map(|mut e| {
                                            let edit = crate::editor::copy_edit(e.file(), |id| {
                                                crate::zones::shipped(id).is_some()
                                            });
                                            let _ = e.apply(edit);
                                            e.to_json()
                                        })
                                        .unwrap_or_else(|_| text.clone());
                                    browser::storage_set(key, &copy);
                                    browser::set_hash("edit");
                                }
                            }>"Edit a copy"</button>
                        }
                    })}
                    <button class="primary" on:click=share>"Share"</button>
                </div>
                {move || share_link.get().map(|r| match r {
                    Ok(link) => view! {
                        <div class="share-box">
                            <span>"Link copied — anyone with it sees this zone:"</span>
                            <input readonly aria-label="Share link" prop:value=link
                                on:focus=move |e| {
                                    if let Some(i) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) { i.select(); }
                                }/>
                        </div>
                    }.into_any(),
                    Err(e) => view! { <div class="share-box error" role="alert">{e}</div> }.into_any(),
                })}
                <MapView model=map_model zone_name=z.name.clone() file_stem=z.id.clone()
                    selection=selection on_option=on_option/>
            </section>
            <aside class="side">
                <section class="details" aria-live="polite">{details}</section>
                <nav class="tabs" role="tablist">
                    {tab_button(Tab::Playtest, "Playtest".into())}
                    {tab_button(Tab::Diagnostics, if errors > 0 { format!("Diagnostics ({errors} errors)") } else { format!("Diagnostics ({diag_count})") })}
                    {tab_button(Tab::Stats, "Stats".into())}
                </nav>
                <div class="panel">{panel}</div>
            </aside>
        </div>
    }
}
