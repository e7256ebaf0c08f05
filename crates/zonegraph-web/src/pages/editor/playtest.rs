//! The editor's playtest: from the entry or a chosen room of the work as it stands, with the
//! designer's playtest panel (character form, options, transcript); it starts again whenever
//! the work changes.

use std::sync::Arc;

use leptos::prelude::*;
use zonegraph_core::engine::Run;

use super::state::State;
use crate::editor;
use crate::pages::designer::playtest::PlaytestPanel;
use crate::playtest::Playtest;

/// The playtest's state.
#[derive(Clone, Copy)]
pub(super) struct Playtesting {
    play: RwSignal<Playtest>,
    run_id: RwSignal<String>,
    /// The room it starts from; `None` for the entry.
    pub from: RwSignal<Option<String>>,
    /// The zone it plays: the work, with `from` as its entry.
    zone: Memo<Arc<zonegraph_core::Zone>>,
}

impl Playtesting {
    /// A playtest of `state`'s work, reset whenever the work or its start changes.
    pub fn new(state: State) -> Playtesting {
        let play = RwSignal::new(Playtest::default());
        let run_id = RwSignal::new("playtest-1".to_string());
        let from = RwSignal::new(None::<String>);
        let zone = Memo::new_with_compare(
            move |_| {
                let from = from.get();
                state.editor.with(|e| {
                    let file = match &from {
                        Some(id) => editor::playtest_file(e.file(), id),
                        None => e.file().clone(),
                    };
                    Arc::new(zonegraph_core::zone::build(&file).0)
                })
            },
            |a, b| !matches!((a, b), (Some(a), Some(b)) if Arc::ptr_eq(a, b)),
        );
        // The zone changed under the playtest: start again.
        Effect::new(move |_| {
            state.editor.track();
            from.track();
            play.set(Playtest::default());
        });
        Playtesting {
            play,
            run_id,
            from,
            zone,
        }
    }

    /// The playtest's run, if it has started (tracked).
    pub fn run(self) -> Option<Run> {
        self.play.with(|p| p.run().cloned())
    }

    /// The playtest tab: where it starts from, and the playtest panel.
    pub fn panel(self, state: State) -> AnyView {
        let Playtesting {
            play,
            run_id,
            from: play_from,
            zone: play_zone,
        } = self;
        let zone = play_zone.get();
        let exec = Callback::new(move |text: String| {
            let zone = play_zone.get_untracked();
            let id = run_id.get_untracked();
            play.update(|p| p.command(&zone, &text, &id));
        });
        let rooms = state.file(editor::room_names);
        let from = play_from.get_untracked();
        view! {
            <label class="field">"Start from"
                <select aria-label="Playtest from room" on:change=move |e| {
                    let v = event_target_value(&e);
                    play_from.set((!v.is_empty()).then_some(v));
                }>
                    <option value="" selected=from.is_none()>"the entry"</option>
                    {rooms.into_iter().map(|(id, name)| {
                        let sel = from.as_deref() == Some(id.as_str());
                        view! { <option value=id selected=sel>{name}</option> }
                    }).collect_view()}
                </select>
            </label>
            <PlaytestPanel zone=zone play=play run_id=run_id exec=exec/>
        }
        .into_any()
    }
}
