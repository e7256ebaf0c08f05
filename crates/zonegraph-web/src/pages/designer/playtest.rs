//! The designer's playtest tab: the character form, the fork's options, the command buttons
//! and the transcript. It only draws a [`Playtest`] and forwards the clicks to it (commands
//! as chat text, step back, reset); the model and the core's pipeline decide what happens.

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use zonegraph_core::engine::{self, Character};
use zonegraph_core::zone::Ability;

use crate::playtest::Playtest;

/// A labelled input bound to a text signal: one view type for every field of the form.
fn field(
    class: &'static str,
    caption: &'static str,
    name: Option<&'static str>,
    number: Option<(&'static str, &'static str)>,
    hint: Option<&'static str>,
    value: RwSignal<String>,
) -> impl IntoView {
    view! {
        <label class=class>
            <span>{caption}</span>
            <input type=if number.is_some() { "number" } else { "text" } min=number.map(|n| n.0)
                max=number.map(|n| n.1) placeholder=hint aria-label=name
                prop:value=move || value.get() on:input=move |e| value.set(event_target_value(&e))/>
        </label>
    }
}

/// A whole number from a form field, clamped to `lo..=hi` (`lo` when it is no number).
fn number_in(text: &str, lo: i64, hi: i64) -> i64 {
    text.trim().parse::<i64>().map_or(lo, |v| v.clamp(lo, hi))
}

/// "STR", "DEX", …: the score fields' captions.
fn abbreviation(a: Ability) -> &'static str {
    match a {
        Ability::Str => "STR",
        Ability::Dex => "DEX",
        Ability::Con => "CON",
        Ability::Int => "INT",
        Ability::Wis => "WIS",
        Ability::Cha => "CHA",
    }
}

/// What a command button needs before it can be pressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Needs {
    /// A run.
    Run,
    /// A run standing in a room (not at a fork, not over).
    Room,
    /// Something to undo.
    History,
}

/// Character, run id, the bot's words, and the buttons that send its commands.
#[component]
pub fn PlaytestPanel(
    zone: Arc<zonegraph_core::Zone>,
    play: RwSignal<Playtest>,
    run_id: RwSignal<String>,
    exec: Callback<String>,
) -> impl IntoView {
    let level = RwSignal::new(zone.min_level.max(1).to_string());
    // The one default character: the standard scores at the zone's lowest level.
    let standard = Character::standard_for(&zone);
    let scores = standard.scores.map(|s| RwSignal::new(s.to_string()));
    let keys = RwSignal::new(String::new());
    let typed = RwSignal::new(String::new());
    let zone_id = StoredValue::new(zone.id.clone());

    let start = move || {
        let mut c = Character {
            level: number_in(&level.get_untracked(), 1, 20) as u32,
            scores: scores.map(|s| number_in(&s.get_untracked(), 1, 30) as i32),
            ..Character::default()
        };
        for k in keys.get_untracked().split([',', ' ']) {
            c.add_key(k);
        }
        play.set(Playtest::new(c));
        exec.run(format!("!zone enter {}", zone_id.get_value()));
    };
    let status = {
        let zone = zone.clone();
        Memo::new(move |_| play.with(|p| p.status(&zone)))
    };
    let choices = move || {
        status
            .get()
            .filter(|s| matches!(s.phase, engine::Phase::Fork | engine::Phase::Waiting))
            .map(|s| {
                s.exits
                    .into_iter()
                    .map(|x| {
                        let n = x.number;
                        let label = x.label.unwrap_or_else(|| "something".into());
                        let open = x.state == engine::ExitState::Open;
                        view! {
                            <button class={if open { "choice open" } else { "choice locked" }}
                                on:click=move |_| exec.run(format!("go {n}"))>
                                {format!("go {n} · {label}{}", if open { "" } else { " (locked)" })}
                            </button>
                        }
                    })
                    .collect_view()
            })
    };
    let ready = move |needs: Needs| match needs {
        Needs::Run => play.with(|p| p.run().is_some()),
        Needs::Room => status
            .get()
            .is_some_and(|s| matches!(s.phase, engine::Phase::InRoom)),
        Needs::History => play.with(Playtest::can_step_back),
    };
    let log = move || {
        play.with(|p| {
            p.log
                .iter()
                .rev()
                .map(|(cmd, reply)| {
                    view! {
                        <li>
                            <div class="said">{format!("› {cmd}")}</div>
                            <pre class="reply">{reply.clone()}</pre>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    // Every button runs a command; "" is step back, "reset" clears the playtest.
    let buttons = [
        ("Advance", "!zone advance", Needs::Room),
        ("Status", "!zone status", Needs::Run),
        ("Chat map", "!zone map", Needs::Run),
        ("↶ Step back", "", Needs::History),
    ]
    .map(|(caption, cmd, needs)| {
        view! {
            <button type="button" disabled=move || !ready(needs)
                on:click=move |_| match cmd {
                    "" => play.update(Playtest::step_back),
                    cmd => exec.run(cmd.to_string()),
                }>{caption}</button>
        }
    });
    let score_inputs = Ability::ALL.map(|a| {
        field(
            "score",
            abbreviation(a),
            Some(a.name()),
            Some(("1", "30")),
            None,
            scores[a.index()],
        )
    });
    let submit = move |e: ev::SubmitEvent| {
        e.prevent_default();
        // The character form starts a run; the chat form sends what was typed.
        let said = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|f| f.class_name() == "say");
        if !said {
            start();
        } else if !typed.get_untracked().trim().is_empty() {
            exec.run(typed.get_untracked());
            typed.set(String::new());
        }
    };

    view! {
        <div class="playtest">
            <form class="character" on:submit=submit>
                <div class="row">
                    {field("", "Level", None, Some(("1", "20")), None, level)}
                    {field("", "Run id", None, None, None, run_id)}
                </div>
                <div class="scores">{score_inputs}</div>
                {field("keys", "Keys", None, None, Some("skull_key, …"), keys)}
                <div class="row buttons">
                    <button type="submit" class="primary">{move || if ready(Needs::Run) { "Restart run" } else { "Start run" }}</button>
                    {buttons}
                    <button type="button" on:click=move |_| play.set(Playtest::default())>"Reset"</button>
                </div>
            </form>
            <div class="choices" role="group" aria-label="Fork options">{choices}</div>
            <form class="say" on:submit=submit>
                {field("", "", Some("Chat command"), None, Some("!zone advance, go 2, !char…"), typed)}
                <button type="submit">"Send"</button>
            </form>
            <ol class="transcript" aria-live="polite" aria-label="What the bot says">{log}</ol>
        </div>
    }
}
