//! The router and the shell: which page the URL asks for, under the top bar.

use leptos::ev;
use leptos::prelude::*;

use crate::pages::designer::preview;
use crate::pages::editor::{EditorPage, Opened};
use crate::pages::gallery::{Gallery, LocalZone};
use crate::views::{Problem, capitalise};
use crate::{browser, doc, share};

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
    /// A player's run map: `/run/<token>` (or `#run/<token>` on a plain static host); the
    /// run page's own bundle draws it.
    Run(String),
    /// The zone editor: `#edit` on the work saved in this browser, or opening a zone:
    /// `#edit/zone/<id>` (shipped), `#edit/z1:…` (a share link), `#edit/local` (opened
    /// here, too large for a link), `#edit/bench/<N>` (a generated zone of about N rooms).
    Edit(Option<EditFrom>),
    /// A generated zone of about N rooms (`zonegraph_core::synth::layered`), for the
    /// performance figures in BENCHMARKS.md: `#bench/<N>`.
    Bench(usize),
}

/// Where the editor opens a zone from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditFrom {
    Zone(String),
    Shared(String),
    Local,
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
    } else if hash == "edit" {
        Route::Edit(None)
    } else if let Some(from) = hash.strip_prefix("edit/") {
        Route::Edit(Some(if let Some(id) = from.strip_prefix("zone/") {
            EditFrom::Zone(id.to_string())
        } else if let Some(n) = from.strip_prefix("bench/").and_then(|n| n.parse().ok()) {
            EditFrom::Bench(n)
        } else if from == "local" {
            EditFrom::Local
        } else {
            EditFrom::Shared(from.to_string())
        }))
    } else {
        Route::Gallery
    }
}

fn current_route() -> Route {
    route_of(&browser::path(), &browser::hash())
}

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
        // The run page is a bundle of its own: hand the link over to it.
        Route::Run(token) => {
            browser::replace_location(&format!(
                "/run-page/#run/{}",
                js_sys::encode_uri_component(&token)
            ));
            view! { <p class="loading">"Opening the run map…"</p> }.into_any()
        }
        Route::Edit(None) => view! { <EditorPage/> }.into_any(),
        Route::Edit(Some(from)) => {
            let open = match from {
                EditFrom::Zone(id) => crate::zones::shipped(&id)
                    .map(|(file, text)| Opened { name: file.to_string(), text: text.to_string() })
                    .ok_or_else(|| format!("there is no shipped zone called \"{id}\"")),
                EditFrom::Shared(fragment) => share::decode_share(&fragment)
                    .map(|text| Opened { name: "the shared zone".into(), text })
                    .map_err(|e| format!("this share link cannot be opened: {e}")),
                EditFrom::Local => local
                    .0
                    .get_untracked()
                    .map(|(name, text)| Opened { name, text })
                    .ok_or_else(|| "that zone was opened in another page load".to_string()),
                EditFrom::Bench(n) => {
                    let n = n.clamp(2, MAX_BENCH_ROOMS);
                    let zone = zonegraph_core::synth::layered("bench", n, 8, 7);
                    Ok(Opened {
                        name: format!("a generated zone of {n} rooms"),
                        text: zonegraph_core::format::to_pretty_json(&zone),
                    })
                }
            };
            view! { <EditorPage open=open/> }.into_any()
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(route_of("/", "edit"), Route::Edit(None));
        assert_eq!(
            route_of("/", "edit/zone/crypt_valdris"),
            Route::Edit(Some(EditFrom::Zone("crypt_valdris".into())))
        );
        assert_eq!(
            route_of("/", "edit/z1:abc"),
            Route::Edit(Some(EditFrom::Shared("z1:abc".into())))
        );
        assert_eq!(
            route_of("/", "edit/local"),
            Route::Edit(Some(EditFrom::Local))
        );
        assert_eq!(
            route_of("/", "edit/bench/200"),
            Route::Edit(Some(EditFrom::Bench(200)))
        );
    }
}
