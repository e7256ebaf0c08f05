//! The editor's Insight tab and map layer: what players did in the open zone, loaded from the
//! server it was opened from (`GET /api/zones/{id}/insight`, the publish form's token). While
//! the tab is open the map shows each room shaded by its reach with its share written above
//! it, each passage under a band as wide as its share of the runs, drop-off rooms and locks
//! that contradict the model marked in words; the panel says every number as text. What is
//! read and decided is [`crate::insight`]'s; this only fetches and draws.

use std::sync::Arc;

use leptos::prelude::*;

use super::state::State;
use crate::browser;
use crate::insight::{self, Insight};
use crate::model::MapModel;
use crate::views::sections;

/// A room's name in the panel: its label, or its id.
fn namer(state: State) -> impl Fn(&str) -> String {
    let names: Vec<(String, String)> = state.editor.with_untracked(|e| {
        e.file()
            .nodes
            .iter()
            .flatten()
            .map(|n| {
                let label = if n.label.is_empty() {
                    &n.node_id
                } else {
                    &n.label
                };
                (n.node_id.clone(), label.clone())
            })
            .collect()
    });
    move |id: &str| {
        names
            .iter()
            .find(|n| n.0 == id)
            .map_or_else(|| id.to_string(), |n| n.1.clone())
    }
}

/// Loads the insight of the zone this editor opened from the server.
fn load(state: State) {
    let Some(id) = state.from_server.get_untracked() else {
        return;
    };
    let (srv, token) = (state.server.get_untracked(), state.token.get_untracked());
    let url = insight::url(&srv, &id);
    let passages: Vec<(String, String)> = state.editor.with_untracked(|e| {
        e.file()
            .edges
            .iter()
            .flatten()
            .map(|p| (p.from_node.clone(), p.to_node.clone()))
            .collect()
    });
    let name = namer(state);
    leptos::task::spawn_local(async move {
        let got = match browser::send("GET", &url, &token, None).await {
            Ok((200, body)) => insight::read(&body, &passages, name)
                .map(Arc::new)
                .map_err(|why| format!("Insight not loaded from {url}: {why}.")),
            Ok((status, body)) => Err(insight::error_words(status, &body, &url, &id)),
            Err(e) => Err(format!("Insight not loaded: {e}.")),
        };
        state.insight.set(Some(got));
    });
}

/// The Insight tab's panel.
pub(super) fn panel(state: State) -> impl IntoView {
    let Some(id) = state.from_server.get() else {
        return view! {
            <p class="hint">"Open this zone from a server (Publish… then “Open from server”, with a publish token) to see what players did in it."</p>
        }
        .into_any();
    };
    let shown = state.insight.get();
    let body = match shown {
        None => ().into_any(),
        Some(Err(why)) => view! { <p class="error" role="alert">{why}</p> }.into_any(),
        Some(Ok(i)) => sections(i.sections.clone()).into_any(),
    };
    view! {
        <div class="insight">
            <button class="load-insight" on:click=move |_| load(state)>{format!("Load insight of {id}")}</button>
            <p class="hint">"On the map: each room shaded by its reach, written above it; amber bands under the passages runs took, as wide as their share of the runs; ⚑ and a dashed red frame for a room where many runs ended without winning; “⚠ play ≠ model” at a lock whose observed pass rate falls outside the model's interval. Counts of 1 to 4 runs, and those a sum would give them back by, show as “hidden”; no rate is given over a hidden count or under 5 runs."</p>
            {body}
        </div>
    }
    .into_any()
}

/// Draws the insight over the editor's map while `shown`, else clears it.
pub(super) fn layer(state: State, model: Memo<Arc<MapModel>>, shown: impl Fn() -> bool + 'static) {
    Effect::new(move |_| {
        let m = model.get();
        let i = state.insight.get().and_then(Result::ok).filter(|_| shown());
        request_animation_frame(move || draw(&m, i.as_deref()));
    });
}

/// Draws `i` into the editor's map ([`insight::svg`]): a group of its own first in the
/// drawing's viewport, so the rooms and passages stay on top (the map component never redraws
/// that element).
fn draw(m: &MapModel, i: Option<&Insight>) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(Some(viewport)) = doc.query_selector(".editor-map g.viewport") else {
        return;
    };
    let g = match viewport.query_selector("g.editor-insight") {
        Ok(Some(g)) => g,
        _ => {
            let Ok(g) = doc.create_element_ns(Some("http://www.w3.org/2000/svg"), "g") else {
                return;
            };
            let _ = g.set_attribute("class", "editor-insight");
            let _ = g.set_attribute("aria-hidden", "true");
            let _ = viewport.insert_before(&g, viewport.first_child().as_ref());
            g
        }
    };
    let svg = i.map_or_else(String::new, |i| insight::svg(m, i));
    g.set_inner_html(&svg);
}
