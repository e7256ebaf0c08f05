//! The pages: gallery, designer preview (map, details, playtest, diagnostics, stats) and the
//! player's run map.

use std::sync::Arc;
use std::time::Duration;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use zonegraph_core::analysis::LockStats;
use zonegraph_core::bot::{self, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::diagnostic::{Diagnostic, Severity};
use zonegraph_core::engine::{self, Character, Run};
use zonegraph_core::zone::Ability;

use crate::browser;
use crate::doc::{self, Loaded};
use crate::map::{MapView, Sel};
use crate::model::{self, num};
use crate::{player, share};

/// Where the app is, from the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Gallery,
    /// A shipped zone: `#zone/<id>`.
    Zone(String),
    /// A share link: `#z1:…`.
    Shared(String),
    /// A zone opened here that is too large for a link: `#local`.
    Local,
    /// A player's run map: `/run/<token>` (or `#run/<token>` on a plain static host).
    Run(String),
    /// A generated zone of about N rooms (`zonegraph_core::synth::layered`), for the
    /// performance figures in BENCHMARKS.md: `#bench/<N>`.
    Bench(usize),
}

/// Most rooms `#bench/<N>` generates.
pub const MAX_BENCH_ROOMS: usize = 20_000;

/// Reads the route from a URL's path and fragment (without `#`).
pub fn route_of(path: &str, hash: &str) -> Route {
    if let Some(token) = path
        .trim_end_matches('/')
        .rsplit_once("/run/")
        .map(|(_, t)| t)
        .filter(|t| !t.is_empty())
    {
        return Route::Run(token.to_string());
    }
    if hash.starts_with(share::PREFIX) {
        Route::Shared(hash.to_string())
    } else if let Some(id) = hash.strip_prefix("zone/") {
        Route::Zone(id.to_string())
    } else if let Some(token) = hash.strip_prefix("run/") {
        Route::Run(token.to_string())
    } else if let Some(n) = hash.strip_prefix("bench/").and_then(|n| n.parse().ok()) {
        Route::Bench(n)
    } else if hash == "local" {
        Route::Local
    } else {
        Route::Gallery
    }
}

fn current_route() -> Route {
    route_of(&browser::path(), &browser::hash())
}

/// A zone held in memory for `#local`.
#[derive(Clone, Debug, Default)]
struct LocalZone(RwSignal<Option<(String, String)>>);

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let route = RwSignal::new(current_route());
    let _ = window_event_listener(ev::hashchange, move |_| route.set(current_route()));
    let local = LocalZone(RwSignal::new(None));
    provide_context(local.clone());
    let theme = RwSignal::new(browser::storage_get("zonegraph-theme").unwrap_or_else(|| {
        if browser::prefers_dark() {
            "dark".into()
        } else {
            "light".into()
        }
    }));
    Effect::new(move |_| browser::apply_theme(&theme.get()));
    let toggle_theme = move |_| {
        let next = if theme.get_untracked() == "dark" {
            "light"
        } else {
            "dark"
        };
        browser::storage_set("zonegraph-theme", next);
        theme.set(next.to_string());
    };

    let page = move || {
        match route.get() {
        Route::Gallery => view! { <Gallery/> }.into_any(),
        Route::Zone(id) => match doc::load_shipped_zone(&id) {
            Some(loaded) => preview(&format!("{id}.json"), loaded, false),
            None => view! {
                <Problem title="No such zone".to_string()
                    message=format!("There is no shipped zone called \"{id}\".")/>
            }
            .into_any(),
        },
        Route::Shared(fragment) => match share::decode_share(&fragment) {
            Ok(text) => preview("shared link", doc::load("shared link", &text), true),
            Err(e) => view! {
                <Problem title="This share link cannot be opened".to_string() message=capitalise(&e.to_string())/>
            }
            .into_any(),
        },
        Route::Local => match local.0.get() {
            Some((file, text)) => preview(&file, doc::load(&file, &text), false),
            None => view! {
                <Problem title="Nothing to show".to_string()
                    message="That zone was opened in another page load; open it again from the gallery.".to_string()/>
            }
            .into_any(),
        },
        Route::Run(token) => view! { <RunPage token=token/> }.into_any(),
        Route::Bench(n) => {
            let n = n.clamp(2, MAX_BENCH_ROOMS);
            let zone = zonegraph_core::synth::layered("bench", n, 8, 7);
            preview("", Ok(doc::generated(&format!("bench/{n}"), &zone)), false)
        }
    }
    };

    view! {
        <div class="app">
            <header class="topbar">
                <a class="brand" href="#" aria-label="zonegraph: back to the gallery">
                    <span class="brand-mark" aria-hidden="true">"⋔"</span>
                    "zonegraph"
                </a>
                <span class="tagline">"map viewer"</span>
                <span class="spacer"></span>
                <button class="theme-toggle" on:click=toggle_theme
                    aria-label=move || format!("Switch to {} theme", if theme.get() == "dark" { "light" } else { "dark" })>
                    {move || if theme.get() == "dark" { "☀ Light" } else { "☾ Dark" }}
                </button>
            </header>
            <main class="page">{page}</main>
        </div>
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str() + ".",
        None => String::new(),
    }
}

/// A clear message instead of a blank page.
#[component]
fn Problem(title: String, message: String) -> impl IntoView {
    view! {
        <section class="problem" role="alert">
            <h1>{title}</h1>
            <p>{message}</p>
            <p><a href="#" class="button">"← Back to the gallery"</a></p>
        </section>
    }
}

/// Opens zone text: as a share link when it fits, else in memory (`#local`).
fn open_text(local: &LocalZone, file: &str, text: String) {
    match share::encode_share(&text) {
        Ok(fragment) => browser::set_hash(&fragment),
        Err(_) => {
            local.0.set(Some((file.to_string(), text)));
            browser::set_hash("local");
        }
    }
}

/// The shipped zones, and ways to open another one.
#[component]
fn Gallery() -> impl IntoView {
    let local = expect_context::<LocalZone>();
    let pasted = RwSignal::new(String::new());
    let message = RwSignal::new(None::<String>);
    let drag_over = RwSignal::new(false);

    let cards = doc::load_shipped()
        .into_iter()
        .map(|(file, loaded)| {
            let id = file.trim_end_matches(".json");
            match loaded {
                Ok(l) => {
                    let errors = l.diagnostics.iter().filter(|d| d.is_error()).count();
                    let warnings = l.diagnostics.len() - errors;
                    let z = &l.zone;
                    let summary = format!(
                        "tier {} · levels {}–{} · {} rooms",
                        z.tier,
                        z.min_level,
                        z.max_level,
                        z.graph.node_count()
                    );
                    let health = if errors > 0 {
                        format!("{errors} error{}", if errors == 1 { "" } else { "s" })
                    } else if warnings > 0 {
                        format!("{warnings} warning{}", if warnings == 1 { "" } else { "s" })
                    } else {
                        "clean".to_string()
                    };
                    let thumb = thumbnail(&l);
                    view! {
                        <li>
                            <a class="card" href=format!("#zone/{id}")>
                                {thumb}
                                <span class="card-title">{z.name.clone()}</span>
                                <span class="card-meta">{summary}</span>
                                <span class={if errors > 0 { "badge bad" } else if warnings > 0 { "badge warn" } else { "badge ok" }}>{health}</span>
                            </a>
                        </li>
                    }
                    .into_any()
                }
                Err(e) => view! { <li class="card broken">{format!("{file}: {e}")}</li> }.into_any(),
            }
        })
        .collect_view();

    let open_file = {
        let local = local.clone();
        move |file: web_sys::File| {
            let local = local.clone();
            leptos::task::spawn_local(async move {
                let name = file.name();
                match browser::read_file(file).await {
                    Ok(text) => open_text(&local, &name, text),
                    Err(e) => message.set(Some(e)),
                }
            });
        }
    };
    let on_pick = {
        let open_file = open_file.clone();
        move |e: ev::Event| {
            let input: Option<web_sys::HtmlInputElement> =
                e.target().and_then(|t| t.dyn_into().ok());
            if let Some(f) = input.and_then(|i| i.files()).and_then(|fs| fs.get(0)) {
                open_file(f);
            }
        }
    };
    let on_drop = {
        let open_file = open_file.clone();
        move |e: ev::DragEvent| {
            e.prevent_default();
            drag_over.set(false);
            if let Some(f) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|fs| fs.get(0))
            {
                open_file(f);
            }
        }
    };
    let open_pasted = {
        let local = local.clone();
        move |_| {
            let text = pasted.get_untracked();
            if text.trim().is_empty() {
                message.set(Some("Paste a zone's JSON first.".into()));
                return;
            }
            // Check here so a mistake is shown next to the text, not on another page.
            match doc::load("pasted zone", &text) {
                Ok(_) => open_text(&local, "pasted zone", text),
                Err(e) => message.set(Some(format!("This is not a zone: {e}"))),
            }
        }
    };

    view! {
        <section class="gallery">
            <h1>"Zones"</h1>
            <p class="lead">"Pick a zone to preview its map, check it and playtest it — or open your own."</p>
            <ul class="cards">{cards}</ul>
            <h2>"Open a zone"</h2>
            <div
                class="dropzone"
                class:over=move || drag_over.get()
                on:dragover=move |e: ev::DragEvent| { e.prevent_default(); drag_over.set(true); }
                on:dragleave=move |_| drag_over.set(false)
                on:drop=on_drop
            >
                <p>"Drop a zone file here, or "
                    <label class="button">"choose a file"
                        <input type="file" accept=".json,application/json" class="visually-hidden" on:change=on_pick/>
                    </label>
                </p>
                <textarea
                    aria-label="Zone JSON"
                    placeholder="…or paste zone JSON here"
                    prop:value=move || pasted.get()
                    on:input=move |e| pasted.set(event_target_value(&e))
                ></textarea>
                <button class="primary" on:click=open_pasted>"Preview pasted zone"</button>
                {move || message.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
            </div>
        </section>
    }
}

/// A tiny static drawing of a zone for its gallery card.
fn thumbnail(l: &Loaded) -> impl IntoView + use<> {
    let m = model::build(&l.zone, &l.layout, None);
    let paths = m
        .passages
        .iter()
        .map(|p| view! { <path d=p.d.clone()></path> })
        .collect_view();
    let dots = m
        .rooms
        .iter()
        .map(|r| {
            view! {
                <rect class=crate::map::room_class(r.kind) x=model::num(r.x - model::BOX_W / 2.0)
                    y=model::num(r.y - model::BOX_H / 2.0) width="184" height="56" rx="14"></rect>
            }
        })
        .collect_view();
    view! {
        <svg class="thumb" viewBox=crate::map::view_box((m.width, m.height)) aria-hidden="true"
            preserveAspectRatio="xMidYMid meet">
            <g class="thumb-lines">{paths}</g>
            <g class="thumb-rooms">{dots}</g>
        </svg>
    }
}

/// The designer for a loaded zone, or what is wrong with it.
fn preview(file: &str, loaded: Result<Loaded, String>, shared: bool) -> AnyView {
    match loaded {
        Ok(loaded) => view! { <Designer loaded=Arc::new(loaded) shared=shared/> }.into_any(),
        Err(e) => view! {
            <Problem title=format!("{file} is not a zone this viewer can read") message=e/>
        }
        .into_any(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Playtest,
    Diagnostics,
    Stats,
}

/// A playtest: the bot's state for one player, the history for step back, the transcript.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Playtest {
    pub player: Player,
    history: Vec<Player>,
    /// `(command as typed, the bot's reply text)`, oldest first.
    pub log: Vec<(String, String)>,
}

impl Playtest {
    /// Runs one line of text through the bot's command pipeline ([`bot::handle`]), exactly
    /// as the chat bot would, in the loose syntax of a playtest box (`go 2`, `status`).
    pub fn command(&mut self, zone: &zonegraph_core::Zone, text: &str, run_id: &str) {
        self.history.push(self.player.clone());
        let cx = bot::Context {
            // The core takes the clock from its caller; steps keep playtests repeatable.
            now: 1_000 * (self.log.len() as i64 + 1),
            new_run_id: run_id.to_string(),
            run_link: None,
            // A playtest waits at a fork as long as the designer likes.
            fork_timeout_ms: i64::MAX,
            syntax: Syntax::Loose,
        };
        let out = bot::handle(std::slice::from_ref(zone), &mut self.player, text, &cx);
        let text_out: Vec<String> = out.replies.into_iter().map(|r| r.text).collect();
        self.log.push((text.to_string(), text_out.join("\n\n")));
    }

    /// Undoes the last command.
    pub fn step_back(&mut self) {
        if let Some(p) = self.history.pop() {
            self.player = p;
            self.log.pop();
        }
    }

    pub fn run(&self) -> Option<&Run> {
        self.player.run.as_ref()
    }
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
                Some(view) => model::build_player(&view),
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
        let result = if text.is_empty() {
            Err("A generated zone has no file to share.".to_string())
        } else {
            share::encode_share(&text)
                .map(|f| format!("{}#{f}", browser::base_url()))
                .map_err(|e| capitalise(&e.to_string()))
        };
        if let Ok(link) = &result {
            browser::copy(link);
        }
        share_link.set(Some(result));
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
        move || match tab.get() {
            Tab::Playtest => view! {
                <PlaytestPanel zone=zone.clone() play=play run_id=run_id exec=Callback::new({
                    let exec = exec.clone();
                    move |t: String| exec(t)
                })/>
            }
            .into_any(),
            Tab::Diagnostics => diagnostics_view(&loaded, selection).into_any(),
            Tab::Stats => stats_view(&loaded).into_any(),
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

fn details_view(rows: Vec<model::Row>, selected: bool) -> impl IntoView {
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
fn PlaytestPanel(
    zone: Arc<zonegraph_core::Zone>,
    play: RwSignal<Playtest>,
    run_id: RwSignal<String>,
    exec: Callback<String>,
) -> impl IntoView {
    let level = RwSignal::new(zone.min_level.max(1).to_string());
    let scores = [(); 6].map(|()| RwSignal::new("10".to_string()));
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
        play.set(Playtest {
            player: Player {
                character: c,
                run: None,
            },
            ..Playtest::default()
        });
        exec.run(format!("!zone enter {}", zone_id.get_value()));
    };
    let status = {
        let zone = zone.clone();
        Memo::new(move |_| {
            play.with(|p| {
                p.run()
                    .map(|r| engine::status(&zone, r, &p.player.character))
            })
        })
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
        Needs::History => play.with(|p| !p.log.is_empty()),
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
            <div class="choices" aria-label="Fork options">{choices}</div>
            <form class="say" on:submit=submit>
                {field("", "", Some("Chat command"), None, Some("!zone advance, go 2, !char…"), typed)}
                <button type="submit">"Send"</button>
            </form>
            <ol class="transcript" aria-live="polite" aria-label="What the bot says">{log}</ol>
        </div>
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn diagnostics_view(l: &Loaded, selection: RwSignal<Option<Sel>>) -> impl IntoView + use<> {
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

fn stats_view(l: &Loaded) -> impl IntoView + use<> {
    let s = zonegraph_core::analysis::stats(&l.zone);
    let opt = |v: Option<usize>| v.map_or_else(|| "—".to_string(), |v| format!("{v} rooms"));
    let routes = match s.routes {
        Some(n) => n.to_string(),
        None => "unbounded (a loop lies on a route)".into(),
    };
    let chokes: Vec<String> = s
        .choke_points
        .iter()
        .map(|id| {
            l.zone
                .node_by_id(id)
                .map_or_else(|| id.clone(), |n| n.display_label().to_string())
        })
        .collect();
    let locks = s
        .locks
        .iter()
        .map(|lock| lock_chart(l, lock))
        .collect_view();
    view! {
        <div class="stats">
            <dl class="kv">
                <dt>"Longest route"</dt><dd>{opt(s.longest_path)}</dd>
                <dt>"Shortest route"</dt><dd>{opt(s.shortest_path)}</dd>
                <dt>"Routes"</dt><dd>{routes}</dd>
                <dt>"Forks"</dt><dd>{s.forks.to_string()}</dd>
                <dt>"Choke points"</dt><dd>{chokes.join(" → ")}</dd>
            </dl>
            <h3>"Locks"</h3>
            <ul class="locks">{locks}</ul>
        </div>
    }
    .into_any()
}

/// One lock's pass chance: bars across ability modifiers, or pass/fail across levels.
fn lock_chart(l: &Loaded, lock: &LockStats) -> impl IntoView + use<> {
    let name = |id: &str| {
        l.zone
            .node_by_id(id)
            .map_or_else(|| id.to_string(), |n| n.display_label().to_string())
    };
    let title = format!("{} → {}", name(&lock.from), name(&lock.to));
    let chart = if let Some(by) = &lock.by_modifier {
        let n = by.len().max(1) as f64;
        let (w, h) = (220.0, 70.0);
        let bw = w / n;
        let bars = by
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let bh = (h - 26.0) * c.chance;
                let x = i as f64 * bw;
                view! {
                    <g>
                        <rect class="bar" x=num(x + 3.0) y=num(h - 14.0 - bh) width=num(bw - 6.0) height=num(bh) rx="2"></rect>
                        <text class="pct" x=num(x + bw / 2.0) y=num(h - 17.0 - bh) text-anchor="middle">{model::percent(c.chance)}</text>
                        <text class="axis" x=num(x + bw / 2.0) y="68" text-anchor="middle">{format!("{:+}", c.modifier)}</text>
                    </g>
                }
            })
            .collect_view();
        let label = format!(
            "Pass chance by ability modifier: {}",
            by.iter()
                .map(|c| format!("{:+} {}", c.modifier, model::percent(c.chance)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        view! {
            <svg class="chart" viewBox="0 0 220 70" role="img" aria-label=label>{bars}</svg>
            <p class="chart-caption">"pass chance by ability modifier"</p>
        }
        .into_any()
    } else if let Some(levels) = &lock.by_level {
        let cells = levels
            .iter()
            .take(20)
            .map(|lv| {
                view! {
                    <span class={if lv.passes { "lv pass" } else { "lv fail" }}
                        title=format!("level {}", lv.level)>{lv.level.to_string()}</span>
                }
            })
            .collect_view();
        view! { <div class="levels" aria-label="Levels that pass">{cells}</div>
        <p class="chart-caption">"levels that pass (green)"</p> }
        .into_any()
    } else {
        view! { <p class="chart-caption">{lock.note.clone().unwrap_or_default()}</p> }.into_any()
    };
    view! {
        <li>
            <div class="lock-title">{title}</div>
            <div class="lock-req">{lock.requirement.clone()}</div>
            {chart}
        </li>
    }
}

/// How often the run page asks the server again.
pub const POLL: Duration = Duration::from_secs(10);

/// The player's run map: read-only, refreshed while the page is open. Everything on it comes
/// from the server's player view and status words; the page never sees the zone file.
#[component]
fn RunPage(token: String) -> impl IntoView {
    let state = RwSignal::new(None::<Result<Arc<doc::RunPayload>, String>>);
    let updated = RwSignal::new(String::new());
    let url = format!("/api/runs/{}", js_sys::encode_uri_component(&token));
    let load = {
        let url = url.clone();
        move || {
            let url = url.clone();
            leptos::task::spawn_local(async move {
                let result = match browser::fetch_text(&url).await {
                    Ok((200, body)) => doc::parse_run_payload(&body).map(Arc::new),
                    Ok((404, _)) => Err("No run with this link: it may have expired.".into()),
                    Ok((status, _)) => Err(format!("The server answered {status}.")),
                    Err(e) => Err(capitalise(&e)),
                };
                // Keep the last good map when a refresh fails; say so beside it.
                match (&result, state.get_untracked()) {
                    (Err(e), Some(Ok(_))) => updated.set(format!("refresh failed: {e}")),
                    _ => {
                        let same = matches!((&result, state.get_untracked()), (Ok(a), Some(Ok(b))) if a == &b);
                        if !same {
                            state.set(Some(result));
                        }
                        updated.set(format!(
                            "updated {}",
                            js_sys::Date::new_0().to_locale_time_string("en-GB")
                        ));
                    }
                }
            });
        }
    };
    load();
    if let Ok(handle) = set_interval_with_handle(load, POLL) {
        on_cleanup(move || handle.clear());
    }
    let selection = RwSignal::new(None::<Sel>);
    move || match state.get() {
        None => view! { <p class="loading">"Loading the run map…"</p> }.into_any(),
        Some(Err(e)) => {
            view! { <Problem title="This run map cannot be shown".to_string() message=e/> }
                .into_any()
        }
        Some(Ok(p)) => {
            let map_model = Arc::new(model::build_player(&p.view));
            let details = {
                let p = p.clone();
                move || {
                    let rows = match selection.get() {
                        Some(Sel::Room(key)) => player::room_details(&p.view, &key),
                        Some(Sel::Passage(i)) => player::passage_details(&p.view, i),
                        None => Vec::new(),
                    };
                    details_view(rows, selection.get().is_some())
                }
            };
            view! {
                <div class="designer run-page">
                    <section class="map-pane">
                        <div class="zone-head">
                            <div>
                                <h1>{p.view.zone_name.clone()}</h1>
                                <p class="meta">{move || format!("Your run · read-only · {}", updated.get())}</p>
                            </div>
                        </div>
                        <MapView model=Signal::derive(move || map_model.clone())
                            zone_name=p.view.zone_name.clone() file_stem=p.view.zone_id.clone()
                            selection=selection/>
                    </section>
                    <aside class="side">
                        <section class="details" aria-live="polite">{details}</section>
                        <h2>"In the chat"</h2>
                        <pre class="reply prompt">{p.status.clone()}</pre>
                    </aside>
                </div>
            }
            .into_any()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zones;

    #[test]
    fn routes() {
        assert_eq!(route_of("/", ""), Route::Gallery);
        assert_eq!(
            route_of("/", "zone/crypt_valdris"),
            Route::Zone("crypt_valdris".into())
        );
        assert_eq!(route_of("/", "z1:abc"), Route::Shared("z1:abc".into()));
        assert_eq!(route_of("/run/tok", ""), Route::Run("tok".into()));
        assert_eq!(route_of("/app/run/tok/", ""), Route::Run("tok".into()));
        assert_eq!(route_of("/", "run/tok"), Route::Run("tok".into()));
    }

    #[test]
    fn playtest_speaks_like_the_bot_and_steps_back() {
        let (_, text) = zones::shipped("crypt_valdris").expect("shipped");
        let l = doc::load("c", text).expect("loads");
        let mut p = Playtest::default();
        p.command(&l.zone, "!zone enter crypt_valdris", "t1");
        p.command(&l.zone, "advance", "t1");
        p.command(&l.zone, "advance", "t1");
        let at_fork = p.clone();
        assert!(p.log[2].1.contains("!zone go"), "{}", p.log[2].1);
        p.command(&l.zone, "go 1", "t1");
        assert_ne!(p, at_fork);
        p.step_back();
        assert_eq!(p, at_fork);
        p.command(&l.zone, "dance", "t1");
        assert!(
            p.log
                .last()
                .is_some_and(|(_, r)| r.contains("Valid commands"))
        );
    }
}
