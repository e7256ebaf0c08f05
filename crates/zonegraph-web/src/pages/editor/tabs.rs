//! The editor's side tabs under the forms: the count of findings, then the core's checks,
//! the zone's stats, the changes against the version opened, the players' insight, or the
//! playtest.

use leptos::prelude::*;

use super::Tab;
use super::playtest::Playtesting;
use super::state::State;
use super::{changes, insight};
use crate::editor;
use crate::pages::designer::{diagnostics, stats};

/// The findings' count, the tab bar and the chosen tab.
pub(super) fn view(state: State, tab: RwSignal<Tab>, playtest: Playtesting) -> impl IntoView {
    let selection = state.selection;
    let counts = move || {
        state
            .loaded
            .with(|l| editor::findings_words(&l.diagnostics))
    };
    let tab_button = move |t: Tab, label: &'static str| {
        view! {
            <button role="tab" aria-selected=move || (tab.get() == t).to_string()
                class:active=move || tab.get() == t on:click=move |_| tab.set(t)>{label}</button>
        }
    };
    let panel = move || match tab.get() {
        Tab::Checks => state
            .loaded
            .with(|l| diagnostics::view(l, selection))
            .into_any(),
        Tab::Stats => state.loaded.with(|l| stats::view(l)).into_any(),
        Tab::Changes => changes::view(state).into_any(),
        Tab::Insight => insight::panel(state).into_any(),
        Tab::Playtest => playtest.panel(state),
    };
    view! {
        <p class="check-counts" role="status">{counts}</p>
        <nav class="tabs" role="tablist">
            {tab_button(Tab::Checks, "Checks")}
            {tab_button(Tab::Stats, "Stats")}
            {tab_button(Tab::Changes, "Changes")}
            {tab_button(Tab::Insight, "Insight")}
            {tab_button(Tab::Playtest, "Playtest")}
        </nav>
        <div class="panel">{panel}</div>
    }
}
