//! The editor's Changes tab: what the work changes against the version it was opened as (the
//! core's `impact`, computed here, so it works offline): rooms renamed, added, removed and
//! changed, passages and locks, the zone's figures before and after, the findings the change
//! brings or removes. The words are the core's, as `zonegraph diff` prints them.

use leptos::prelude::*;
use zonegraph_core::impact;

use super::state::State;
use crate::editor;
use crate::views::sections;

pub(super) fn view(state: State) -> impl IntoView {
    let base = state.base.get();
    let i = state.editor.with(|e| impact::impact(&base, e.file()));
    let against = match state.from_server.get() {
        Some(id) => {
            format!("Compared with {id} as the server served it when opened or last published.")
        }
        None => "Compared with the zone as it was first opened in this editor.".to_string(),
    };
    let mut findings = impact::finding_lines(&i);
    if findings.is_empty() {
        findings.push("No finding comes or goes.".into());
    }
    view! {
        <div class="changes">
            <p class="hint">{against}</p>
            {sections(vec![
                ("Changes".into(), impact::change_lines(&i)),
                ("Figures (before → after)".into(), editor::figure_lines(&i, true)),
                ("Findings".into(), findings),
            ])}
        </div>
    }
}
