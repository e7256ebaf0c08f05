//! Small view helpers the pages share: the problem message, the details panel, sentence case.

use leptos::prelude::*;

use crate::names::Row;

/// An error's text as a sentence: a capital first letter ([`zonegraph_core::text::capitalise`])
/// and a full stop.
pub fn capitalise(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    zonegraph_core::text::capitalise(s) + "."
}

/// A clear message instead of a blank page.
#[component]
pub fn Problem(title: String, message: String) -> impl IntoView {
    view! {
        <section class="problem" role="alert">
            <h1>{title}</h1>
            <p>{message}</p>
            <p><a href="#" class="button">"← Back to the gallery"</a></p>
        </section>
    }
}

/// The details panel: the selected room's or passage's rows, or how to select one.
pub fn details_view(rows: Vec<Row>, selected: bool) -> impl IntoView {
    if !selected || rows.is_empty() {
        return view! {
            <p class="hint">"Select a room or a passage to see its details. Tab and the arrow keys move between rooms; Enter selects."</p>
        }
        .into_any();
    }
    let items = rows
        .into_iter()
        .map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> })
        .collect_view();
    view! { <dl class="kv">{items}</dl> }.into_any()
}

/// Lines of text as a list (nothing for none): the Publish confirmation's changes.
pub fn lines(lines: Vec<String>) -> Option<impl IntoView + use<>> {
    (!lines.is_empty()).then(|| {
        view! { <ul class="lines">{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul> }
    })
}

/// Headed lists of lines: the editor's Changes and Insight panels (one shape for both keeps
/// the page's WebAssembly small).
pub fn sections(parts: Vec<(String, Vec<String>)>) -> impl IntoView + use<> {
    parts
        .into_iter()
        .map(|(title, l)| view! { <h3>{title}</h3>{lines(l)} })
        .collect_view()
}
