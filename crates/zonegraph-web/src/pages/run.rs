//! The player's run page: a read-only run map, refreshed from `GET /api/runs/{token}`.

use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;

use crate::map::{MapView, Sel};
use crate::views::{Problem, capitalise, details_view};
use crate::{browser, doc, model, player};

/// How often the run page asks the server again.
pub const POLL: Duration = Duration::from_secs(10);

/// The player's run map: read-only, refreshed while the page is open. Everything on it comes
/// from the server's player view and status words; the page never sees the zone file.
#[component]
pub fn RunPage(token: String) -> impl IntoView {
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
