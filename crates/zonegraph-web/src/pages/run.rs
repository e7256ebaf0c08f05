//! The player's run page, a bundle of its own (`zonegraph-run`, `web/run.html`): the map of
//! the player view from `GET /api/runs/{token}`, the chat's status words and the fork's
//! options, kept live by the server's event stream (`/api/runs/{token}/events`), with
//! polling while the stream is down. It links nothing of the designer (no validator, no
//! analysis, no playtest), so a phone downloads only this.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use gloo_net::eventsource::futures::EventSource;
use leptos::prelude::*;
use zonegraph_core::chat::viewer as words;
use zonegraph_core::engine::Phase;

use crate::map::{MapView, Sel};
use crate::views::details_view;
use crate::{browser, doc, model, player};

/// How often the page asks again while the event stream is down.
pub const POLL: Duration = Duration::from_secs(2);
/// How often the page looks at the stream's state (and polls when it is down).
const TICK: Duration = Duration::from_secs(1);

/// The run's link token from the page's URL: `/run/<token>`, or the fragment `#run/<token>`
/// (a static host without the server's route).
pub fn token_of(path: &str, hash: &str) -> Option<String> {
    let from_path = path
        .trim_end_matches('/')
        .rsplit_once("/run/")
        .map(|(_, t)| t);
    from_path
        .or_else(|| hash.strip_prefix("run/"))
        .filter(|t| !t.is_empty() && !t.contains('/'))
        .map(str::to_string)
}

/// One line of the chat's `!zone status` words, as the page lays them out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatusLine {
    /// Plain words.
    Text(String),
    /// An option of the fork (`  2. something (locked — …)`): its number and the words after
    /// it, exactly as the chat listed them.
    Option { number: usize, words: String },
}

/// The chat's status text as its headline ("Crypt of Valdris — room 3 of 6") and the lines
/// after it, the lines that list a fork's options (the core's `choices`, as data) picked out.
/// The words are the chat's own (`chat::status`): the page only lays them out.
pub fn status_lines(text: &str, choices: &[doc::Choice]) -> (String, Vec<StatusLine>) {
    let mut lines = text.lines().enumerate();
    let headline = lines.next().map_or("", |(_, l)| l).trim().to_string();
    let rest = lines
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| match choices.iter().find(|c| c.line == i) {
            Some(c) => StatusLine::Option {
                number: c.number,
                words: c.words.clone(),
            },
            None => StatusLine::Text(l.trim().to_string()),
        })
        .collect();
    (headline, rest)
}

/// Whether the run is over (nothing more will change on this page).
pub fn is_over(p: &doc::RunView) -> bool {
    matches!(p.view.status.phase, Phase::Over { .. })
}

/// How the page hears of changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Opening the event stream.
    Connecting,
    /// The event stream is open: a move shows within a second.
    Live,
    /// The stream is down: asking every [`POLL`].
    Polling,
    /// The run is over: nothing more to follow.
    Over,
}

impl Link {
    /// What the page says of it (the core's words).
    pub fn words(self) -> String {
        match self {
            Link::Connecting => words::LINK_CONNECTING.to_string(),
            Link::Live => words::LINK_LIVE.to_string(),
            Link::Polling => words::link_polling(POLL.as_secs()),
            Link::Over => words::LINK_OVER.to_string(),
        }
    }
}

/// The whole run page: the token from the URL, or a clear message.
#[component]
pub fn RunApp() -> impl IntoView {
    browser::apply_theme(if browser::prefers_dark() {
        "dark"
    } else {
        "light"
    });
    match token_of(&browser::path(), &browser::hash()) {
        Some(token) => view! { <RunPage token=token/> }.into_any(),
        None => view! {
            <RunProblem message=words::RUN_LINK_NAMES_NO_RUN.to_string()/>
        }
        .into_any(),
    }
}

#[component]
fn RunProblem(message: String) -> impl IntoView {
    view! {
        <main class="run-app">
            <section class="problem" role="alert">
                <h1>{words::RUN_PAGE_PROBLEM}</h1>
                <p>{message}</p>
            </section>
        </main>
    }
}

/// The player's run map, following the run live.
#[component]
pub fn RunPage(token: String) -> impl IntoView {
    let state = RwSignal::new(None::<Result<Arc<doc::RunView>, String>>);
    let link = RwSignal::new(Link::Connecting);
    let enc = String::from(js_sys::encode_uri_component(&token));
    let url = format!("/api/runs/{enc}");
    let events_url = format!("/api/runs/{enc}/events");
    // The open stream (dropping it closes the connection).
    let stream: Rc<RefCell<Option<EventSource>>> = Rc::default();

    // A new view: shown when its answer differs from the last one shown (the same run gives
    // the same words: comparing them is smaller code than comparing views); the stream is
    // closed once the run is over.
    let last_body = Rc::new(RefCell::new(String::new()));
    let apply = {
        let stream = stream.clone();
        move |body: String, p: doc::RunView| {
            if is_over(&p) {
                link.set(Link::Over);
                stream.borrow_mut().take();
            }
            let shown = matches!(state.get_untracked(), Some(Ok(_)));
            if !shown || *last_body.borrow() != body {
                *last_body.borrow_mut() = body;
                state.set(Some(Ok(Arc::new(p))));
            }
        }
    };

    // When the current stream was opened (its first seconds of connecting are not a drop).
    let opened_at = Rc::new(std::cell::Cell::new(0.0));
    let open_stream = {
        let (stream, apply, opened_at) = (stream.clone(), apply.clone(), opened_at.clone());
        move || {
            opened_at.set(browser::now_ms());
            let Ok(mut es) = EventSource::new(&events_url) else {
                link.set(Link::Polling);
                return;
            };
            let Ok(mut messages) = es.subscribe("message") else {
                link.set(Link::Polling);
                return;
            };
            *stream.borrow_mut() = Some(es);
            let apply = apply.clone();
            leptos::task::spawn_local(async move {
                while let Some(Ok((_, event))) = messages.next().await {
                    let Some(body) = event.data().as_string() else {
                        continue;
                    };
                    if let Ok(p) = doc::parse_run_payload(&body) {
                        link.set(if is_over(&p) { Link::Over } else { Link::Live });
                        apply(body, p);
                    }
                }
            });
        }
    };

    // The first good answer opens the stream (an unknown run gets none).
    let fetch_once = {
        let (apply, open_stream) = (apply.clone(), open_stream.clone());
        let opened = Rc::new(std::cell::Cell::new(false));
        move || {
            let (url, apply, open_stream) = (url.clone(), apply.clone(), open_stream.clone());
            let opened = opened.clone();
            leptos::task::spawn_local(async move {
                // The first answer may be on its way already (web/run.html asked early).
                let answer = match browser::take_prefetched("zgRun").await {
                    Some(answer) => answer,
                    None => browser::fetch_text(&url).await,
                };
                let result = match answer {
                    Ok((200, body)) => doc::parse_run_payload(&body).map(|p| (body, p)),
                    Ok((404, _)) => Err(words::RUN_NOT_FOUND.to_string()),
                    Ok((status, _)) => Err(words::run_server_answered(status)),
                    Err(e) => Err(e),
                };
                match result {
                    Ok((body, p)) => {
                        let over = is_over(&p);
                        apply(body, p);
                        if !over && !opened.replace(true) {
                            open_stream();
                        }
                    }
                    // Keep the last good map when a refresh fails.
                    Err(e) if !matches!(state.get_untracked(), Some(Ok(_))) => {
                        state.set(Some(Err(e)));
                    }
                    Err(_) => {}
                }
            });
        }
    };

    fetch_once();
    // The stream's state decides: live, or polling while the browser reconnects it (and
    // a new stream if the browser gave up).
    let polled_at = Rc::new(RefCell::new(0.0));
    // A stream the browser gave up on (the server refused it) is opened again after 2 s,
    // then 4 s, … up to a minute.
    let reopen = Rc::new(RefCell::new((0.0, 1_000.0)));
    let tick = move || {
        if link.get_untracked() == Link::Over || !matches!(state.get_untracked(), Some(Ok(_))) {
            return;
        }
        let state_now = stream.borrow().as_ref().map(EventSource::state);
        match state_now {
            Some(gloo_net::eventsource::State::Open) => {
                if link.get_untracked() != Link::Live {
                    link.set(Link::Live);
                }
                reopen.borrow_mut().1 = 1_000.0;
            }
            other => {
                // A first connection under way is not a dropped one.
                let first = link.get_untracked() == Link::Connecting
                    && other == Some(gloo_net::eventsource::State::Connecting)
                    && browser::now_ms() - opened_at.get() < 3_000.0;
                if !first && link.get_untracked() != Link::Polling {
                    link.set(Link::Polling);
                }
                let now = browser::now_ms();
                if now - *polled_at.borrow() >= POLL.as_millis() as f64 {
                    *polled_at.borrow_mut() = now;
                    fetch_once();
                }
                let (at, wait) = *reopen.borrow();
                if matches!(other, None | Some(gloo_net::eventsource::State::Closed))
                    && now - at >= wait
                {
                    *reopen.borrow_mut() = (now, (wait * 2.0).min(60_000.0));
                    stream.borrow_mut().take();
                    open_stream();
                }
            }
        }
    };
    if let Ok(handle) = set_interval_with_handle(tick, TICK) {
        on_cleanup(move || handle.clear());
    }

    let selection = RwSignal::new(None::<Sel>);
    // The page is built once, at the first good answer; later views update it in place, so
    // the map keeps the player's pan and zoom.
    let shown = Memo::new(move |_| state.with(|s| matches!(s, Some(Ok(_)))));
    move || {
        if shown.get() {
            return page(state, link, selection).into_any();
        }
        match state.get() {
            Some(Err(e)) => view! { <RunProblem message=e/> }.into_any(),
            _ => view! { <main class="run-app"><p class="loading">{words::RUN_LOADING}</p></main> }
                .into_any(),
        }
    }
}

/// The run page around the last good view in `state`.
fn page(
    state: RwSignal<Option<Result<Arc<doc::RunView>, String>>>,
    link: RwSignal<Link>,
    selection: RwSignal<Option<Sel>>,
) -> impl IntoView {
    // Views are compared where they arrive (`apply`): here a new one is a new Arc.
    let payload = Memo::new_with_compare(
        move |last: Option<&Option<Arc<doc::RunView>>>| {
            match state.get() {
                Some(Ok(p)) => Some(p),
                // A failed refresh keeps the last good view.
                _ => last.cloned().flatten(),
            }
        },
        |a, b| !matches!((a, b), (Some(Some(a)), Some(Some(b))) if Arc::ptr_eq(a, b)),
    );
    let map_model = Memo::new_with_compare(
        move |_| {
            payload
                .with(|p| {
                    p.as_ref().map(|p| {
                        let layout = player::from_drawing(&p.view, &p.map);
                        Arc::new(model::build_player(&p.view, &layout))
                    })
                })
                .unwrap_or_default()
        },
        |a, b| !matches!((a, b), (Some(a), Some(b)) if Arc::ptr_eq(a, b)),
    );
    let name = payload
        .with_untracked(|p| p.as_ref().map(|p| p.view.zone_name.clone()))
        .unwrap_or_default();
    let stem = payload
        .with_untracked(|p| p.as_ref().map(|p| p.view.zone_id.clone()))
        .unwrap_or_default();
    let over = move || payload.with(|p| p.as_ref().is_some_and(|p| is_over(p)));
    let headline = move || {
        payload.with(|p| {
            p.as_ref()
                .map(|p| status_lines(&p.status.text, &p.status.choices).0)
                .unwrap_or_default()
        })
    };
    let details = move || {
        let rows = payload.with(|p| {
            let Some(p) = p else { return Vec::new() };
            match selection.get() {
                Some(Sel::Room(key)) => player::room_details(&p.view, &key),
                Some(Sel::Passage(i)) => player::passage_details(&p.view, i),
                None => Vec::new(),
            }
        });
        details_view(rows, selection.get().is_some())
    };
    let lines = move || {
        let Some(p) = payload.get() else {
            return Vec::new();
        };
        status_lines(&p.status.text, &p.status.choices)
            .1
            .into_iter()
            .map(|line| status_line_view(&p, line, selection))
            .collect::<Vec<_>>()
    };
    view! {
        <main class="run-app" class:over=over>
            <header class="run-head">
                <h1>{headline}</h1>
                <p class="link-state" class:live=move || link.get() == Link::Live role="status">
                    {move || link.get().words()}
                </p>
            </header>
            <section class="run-map" aria-label="Map">
                <MapView model=map_model zone_name=name file_stem=stem
                    selection=selection focus_current=true/>
            </section>
            <section class="run-status" aria-label="In the chat">
                <h2>"In the chat"</h2>
                <ul class="status-lines">{lines}</ul>
            </section>
            <section class="details" aria-live="polite">{details}</section>
        </main>
    }
}

/// One line of the status words: text, or a fork option that selects its room on the map.
fn status_line_view(
    p: &doc::RunView,
    line: StatusLine,
    selection: RwSignal<Option<Sel>>,
) -> AnyView {
    match line {
        StatusLine::Text(t) => view! { <li class="status-text">{t}</li> }.into_any(),
        StatusLine::Option { number, words } => {
            let key = p
                .view
                .rooms
                .iter()
                .position(|r| r.option == Some(number))
                .map(|i| p.view.room_key(i));
            let open = player::option_open(&p.view, number);
            let go = format!("!zone go {number}");
            // An option the view does not place on the map (a room the player only
            // sensed) is words only: there is nothing to select.
            match key {
                Some(k) => view! {
                    <li>
                        <button class="choose" class:open=open
                            on:click=move |_| selection.set(Some(Sel::Room(k.clone())))>
                            <code class="go">{go}</code>
                            <span class="words">{words}</span>
                        </button>
                    </li>
                }
                .into_any(),
                None => view! {
                    <li class="choose">
                        <code class="go">{go}</code>
                        <span class="words">{words}</span>
                    </li>
                }
                .into_any(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comes_from_the_path_or_the_fragment() {
        assert_eq!(token_of("/run/abc", ""), Some("abc".into()));
        assert_eq!(token_of("/run/abc/", ""), Some("abc".into()));
        assert_eq!(token_of("/run-page/", "run/abc"), Some("abc".into()));
        assert_eq!(token_of("/run-page/index.html", ""), None);
        assert_eq!(token_of("/run/", ""), None);
    }

    #[test]
    fn status_lines_pick_the_options_the_core_names() {
        let text = "Crypt of Valdris — room 3 of 6\nYou are in Branching Passage (fork).\n\
                    A fork waits for your choice. Pick one with !zone go <n>:\n  1. Main Hall (elite)\n  \
                    2. something (locked — A faint draft.)\n  3. Not an option: no choice names it";
        let choice = |number, line, words: &str| doc::Choice {
            number,
            line,
            words: words.into(),
        };
        let choices = [
            choice(1, 3, "Main Hall (elite)"),
            choice(2, 4, "something (locked — A faint draft.)"),
        ];
        let (headline, lines) = status_lines(text, &choices);
        assert_eq!(headline, "Crypt of Valdris — room 3 of 6");
        assert_eq!(
            lines,
            vec![
                StatusLine::Text("You are in Branching Passage (fork).".into()),
                StatusLine::Text(
                    "A fork waits for your choice. Pick one with !zone go <n>:".into()
                ),
                StatusLine::Option {
                    number: 1,
                    words: "Main Hall (elite)".into()
                },
                StatusLine::Option {
                    number: 2,
                    words: "something (locked — A faint draft.)".into()
                },
                StatusLine::Text("3. Not an option: no choice names it".into()),
            ]
        );
    }

    #[test]
    fn the_link_state_says_how_often_the_page_polls() {
        assert_eq!(Link::Live.words(), "live");
        assert_eq!(Link::Polling.words(), "reconnecting: checking every 2 s");
        assert_eq!(Link::Over.words(), "the run has ended");
    }

    #[test]
    fn the_e2e_fixture_status_splits_into_two_options() {
        let body = include_str!("../../../../web/fixtures/run-demo.json");
        let p = doc::parse_run_payload(body).expect("the fixture is a run");
        let (_, lines) = status_lines(&p.status.text, &p.status.choices);
        let options: Vec<usize> = lines
            .iter()
            .filter_map(|l| match l {
                StatusLine::Option { number, .. } => Some(*number),
                StatusLine::Text(_) => None,
            })
            .collect();
        assert_eq!(options, vec![1, 2]);
        assert!(!is_over(&p));
    }
}
