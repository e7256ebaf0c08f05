//! The map's legend: what the glyphs, colours and line styles mean.

use leptos::prelude::*;
use zonegraph_core::chat::viewer as words;

use super::{kind_class, lock_class};
use crate::model::{self, LegendItems};
use crate::names;

/// What the map's glyphs, colours and line styles mean: the entries of `items` (every one on
/// the designer's map, what the drawing uses on a player's), and no legend at all when there
/// are none.
#[component]
pub fn Legend(#[prop(into)] items: Signal<LegendItems>) -> impl IntoView {
    let open = RwSignal::new(true);
    move || items.with(|items| (!items.is_empty()).then(|| legend_view(items, open)))
}

fn legend_view(items: &LegendItems, open: RwSignal<bool>) -> impl IntoView + use<> {
    let kinds = (!items.kinds.is_empty()).then(|| {
        let each = items.kinds.iter().map(|&k| {
            view! {
                <li class=format!("legend-kind {}", kind_class(k))>
                    <span class="chip">{model::kind_glyph(Some(k)).to_string()}</span>
                    {names::kind_name(k)}
                </li>
            }
        });
        view! { <ul class="legend-kinds">{each.collect_view()}</ul> }
    });
    let locks = (!items.locks.is_empty()).then(|| {
        let each = items.locks.iter().map(|&l| {
            view! {
                <li class=format!("legend-lock {}", lock_class(l))>
                    <svg width="34" height="10" aria-hidden="true">
                        <path class="line" d="M2,5 L32,5"></path>
                    </svg>
                    {names::lock_name(l)}
                </li>
            }
        });
        view! { <ul class="legend-locks">{each.collect_view()}</ul> }
    });
    let run = items.has_run_marks().then(|| {
        let visited = items.visited.then(|| {
            view! { <li><span class="chip visit">"3"</span>{words::LEGEND_VISITED}</li> }
        });
        let here = items
            .here
            .then(|| view! { <li><span class="chip here">"▶"</span>{words::LEGEND_HERE}</li> });
        let option = items
            .option
            .then(|| view! { <li><span class="chip opt">"1"</span>{words::LEGEND_OPTION}</li> });
        let unknown = items.unknown.then(|| {
            view! {
                <li class="legend-kind k-unknown"><span class="chip">"?"</span>{words::LEGEND_UNKNOWN}</li>
            }
        });
        view! { <ul class="legend-run">{visited}{here}{option}{unknown}</ul> }
    });
    view! {
        <aside class="legend" aria-label="Legend">
            <button class="legend-toggle" aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                "Legend"
            </button>
            <div class="legend-body" class:hidden=move || !open.get()>
                {kinds}
                {locks}
                {run}
            </div>
        </aside>
    }
}
