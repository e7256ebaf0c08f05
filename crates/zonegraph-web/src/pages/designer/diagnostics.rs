//! The designer's diagnostics tab: every finding of the zone check and the layout's notes; a
//! finding with a place selects it on the map.

use leptos::prelude::*;
use zonegraph_core::diagnostic::{Diagnostic, Severity};

use crate::doc::Loaded;
use crate::map::Sel;

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// The zone's findings, each a button that selects its room or passage, then the layout's
/// notes; a line saying so when there are none.
pub fn view(l: &Loaded, selection: RwSignal<Option<Sel>>) -> impl IntoView + use<> {
    let diags: Vec<Diagnostic> = l.diagnostics.clone();
    let notes = l.layout.notes.clone();
    if diags.is_empty() && notes.is_empty() {
        return view! { <p class="clean">"✓ No errors or warnings: this zone passes zonegraph check --strict."</p> }
            .into_any();
    }
    let layout = l.layout.clone();
    let items = diags
        .into_iter()
        .map(|d| {
            let target = match (&d.node, &d.edge) {
                (_, Some(e)) => layout
                    .edges
                    .iter()
                    .find(|le| le.from == e.from && le.to == e.to)
                    .map(|le| Sel::Passage(le.edge)),
                (Some(n), None) => Some(Sel::Room(n.clone())),
                (None, None) => None,
            };
            let place = match (&d.node, &d.edge) {
                (_, Some(e)) => format!("{} → {}", e.from, e.to),
                (Some(n), None) => n.clone(),
                _ => String::new(),
            };
            let sev = severity_word(d.severity);
            let clickable = target.is_some();
            view! {
                <li>
                    <button class=format!("diag {sev}") disabled=!clickable
                        on:click=move |_| selection.set(target.clone())>
                        <span class="sev">{sev}</span>
                        <code>{d.code.as_str()}</code>
                        <span class="msg">{d.message.clone()}</span>
                        <span class="where">{place}</span>
                    </button>
                </li>
            }
        })
        .collect_view();
    let notes = notes
        .into_iter()
        .map(|n| view! { <li class="note">{n}</li> })
        .collect_view();
    view! {
        <div>
            <ul class="diagnostics">{items}</ul>
            <ul class="notes">{notes}</ul>
        </div>
    }
    .into_any()
}
