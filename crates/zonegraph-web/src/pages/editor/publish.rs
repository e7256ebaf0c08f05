//! The ways the work leaves the editor: a download of the zone file, a live share link, and
//! publishing to a server's `POST /api/zones`.

use leptos::prelude::*;

use super::state::State;
use crate::editor::{self, Editor};
use crate::{browser, share};

/// Downloads the work as its zone file.
pub(super) fn download(state: State) {
    let (name, json) = state
        .editor
        .with_untracked(|e| (editor::file_name(e.file()), e.to_json()));
    if let Err(e) = browser::download(&name, "application/json", &json) {
        state.note.set(format!("The download failed: {e}"));
    }
}

/// The share link while `sharing`, made again after every edit.
pub(super) fn share_link(state: State, sharing: RwSignal<bool>) -> impl IntoView {
    // Made again after every edit; the browser deflates it (async), so an answer for an
    // older text that lands after a newer one's is dropped.
    let share_link = RwSignal::new(None::<Result<String, String>>);
    let made = StoredValue::new(0_u64);
    Effect::new(move |_| {
        made.update_value(|n| *n += 1);
        let this = made.get_value();
        if !sharing.get() {
            share_link.set(None);
            return;
        }
        let json = state.editor.with(|e| e.to_json());
        leptos::task::spawn_local(async move {
            let link = share::encode_share(&json)
                .await
                .map(|f| format!("{}#edit/{f}", browser::base_url()))
                .map_err(|e| format!("No link: {e}."));
            if made.get_value() == this {
                share_link.set(Some(link));
            }
        });
    });
    move || {
        share_link.get().map(|r| match r {
            Ok(link) => view! {
                <div class="share-box">
                    <span>"This link opens the zone as it stands now in the editor:"</span>
                    <input readonly aria-label="Share link" prop:value=link.clone()/>
                    <button on:click=move |_| browser::copy(&link)>"Copy link"</button>
                </div>
            }
            .into_any(),
            Err(e) => view! { <div class="share-box error" role="alert">{e}</div> }.into_any(),
        })
    }
}

/// What the confirm step asks before it is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ask {
    Publish,
    Unpublish,
}

/// The server form, shown while `publishing`: the server's URL and a token (a publish
/// token reads and publishes: `zonegraph token new --scope publish`; unpublishing needs an
/// admin token), kept only while the page is open and sent only in the `Authorization`
/// header. Publish first reads the server's zone of the same id and asks (in the page):
/// the version it replaces and what changes, or refuses a zone this editor did not open
/// from the server. "Open from server" lists the server's zones and opens one; "Unpublish"
/// withdraws the zone, after asking.
pub(super) fn form(state: State, publishing: RwSignal<bool>) -> impl IntoView {
    let (server, token) = (state.server, state.token);
    // The confirm step: what it asks, in words, and the headed lines under it (what the
    // change does; what the server says of its players and runs).
    let asking = RwSignal::new(None::<(Ask, String, Vec<(String, Vec<String>)>)>);
    // The server's zones for "Open from server": (id, what the list shows).
    let listed = RwSignal::new(None::<Vec<(String, String)>>);
    let chosen = RwSignal::new(String::new());
    let access = move || (server.get_untracked(), token.get_untracked());

    let publish = move |e: leptos::ev::SubmitEvent| {
        e.prevent_default();
        let (srv, t) = access();
        let file = state.editor.with_untracked(|e| e.file().clone());
        let opened = state.from_server.get_untracked();
        asking.set(None);
        state.note.set("Reading the server's zones…".into());
        leptos::task::spawn_local(async move {
            let list = browser::send("GET", &editor::publish_url(&srv), &t, None).await;
            let body = match list {
                Ok((200, body)) => body,
                Ok((status, body)) => return state.note.set(editor::publish_words(status, &body)),
                Err(e) => return state.note.set(format!("Not published: {e}.")),
            };
            let (seq, ids) = editor::served_version(&body, &file.zone_id);
            let plan = editor::publish_plan(&file.zone_id, seq, opened.as_deref(), &ids);
            let lines = match plan {
                editor::PublishPlan::Replaces { .. } => {
                    let got =
                        browser::send("GET", &editor::zone_url(&srv, &file.zone_id), &t, None)
                            .await;
                    match got.map(|(s, b)| (s, zonegraph_core::format::parse(&b))) {
                        Ok((200, Ok(old))) => {
                            let lines =
                                editor::impact_lines(&zonegraph_core::impact::impact(&old, &file));
                            // What the server knows and this page does not: the players in
                            // the zone now, its stored runs replayed on this version.
                            let json = zonegraph_core::format::to_pretty_json(&file);
                            let review = browser::send(
                                "POST",
                                &editor::review_url(&srv, &file.zone_id),
                                &t,
                                Some(("application/json", &json)),
                            )
                            .await;
                            vec![
                                ("What changes".to_string(), lines),
                                (
                                    "On the server: its players and stored runs".to_string(),
                                    editor::review_lines(review),
                                ),
                            ]
                        }
                        _ => {
                            return state.note.set(
                                "Not published: the server's version could not be read.".into(),
                            );
                        }
                    }
                }
                _ => Vec::new(),
            };
            let words = editor::plan_words(&file.zone_id, &plan);
            if matches!(plan, editor::PublishPlan::Collides { .. }) {
                state.note.set(words);
            } else {
                state.note.set(String::new());
                asking.set(Some((Ask::Publish, words, lines)));
            }
        });
    };
    let confirm = move |_| {
        let Some((ask, ..)) = asking.get_untracked() else {
            return;
        };
        asking.set(None);
        let (srv, t) = access();
        let (id, json, file) = state.editor.with_untracked(|e| {
            (
                e.file().zone_id.clone(),
                e.to_json(),
                std::sync::Arc::new(e.file().clone()),
            )
        });
        leptos::task::spawn_local(async move {
            match ask {
                Ask::Publish => {
                    state.note.set("Publishing…".into());
                    let sent = browser::send(
                        "POST",
                        &editor::publish_url(&srv),
                        &t,
                        Some(("application/json", &json)),
                    )
                    .await;
                    state.note.set(match sent {
                        Ok((status, body)) => {
                            if status == 200 {
                                state.from_server.set(Some(id));
                                // The Changes tab now compares with what the server serves.
                                state.base.set(file);
                            }
                            editor::publish_words(status, &body)
                        }
                        Err(e) => format!("Not published: {e}."),
                    });
                }
                Ask::Unpublish => {
                    state.note.set("Unpublishing…".into());
                    let sent =
                        browser::send("DELETE", &editor::zone_url(&srv, &id), &t, None).await;
                    state.note.set(match sent {
                        Ok((status, body)) => {
                            if status == 200 {
                                state.from_server.set(None);
                            }
                            editor::unpublish_words(&id, status, &body)
                        }
                        Err(e) => format!("Not unpublished: {e}."),
                    });
                }
            }
        });
    };
    let unpublish = move |_| {
        let id = state.editor.with_untracked(|e| e.file().zone_id.clone());
        asking.set(Some((
            Ask::Unpublish,
            format!("Unpublish {id}? The server stops serving it (runs already there go on to their end)."),
            Vec::new(),
        )));
    };
    let list = move |_| {
        let (srv, t) = access();
        asking.set(None);
        state.note.set("Reading the server's zones…".into());
        leptos::task::spawn_local(async move {
            match browser::send("GET", &editor::publish_url(&srv), &t, None).await {
                Ok((200, body)) => {
                    let zones = editor::served_list(&body);
                    chosen.set(zones.first().map(|z| z.0.clone()).unwrap_or_default());
                    state
                        .note
                        .set(format!("The server serves {} zones.", zones.len()));
                    listed.set(Some(zones));
                }
                Ok((status, body)) => {
                    state
                        .note
                        .set(editor::publish_words(status, &body).replacen(
                            "Not published",
                            "Not listed",
                            1,
                        ))
                }
                Err(e) => state.note.set(format!("Not listed: {e}.")),
            }
        });
    };
    let open = move |_| {
        let (srv, t) = access();
        let id = chosen.get_untracked();
        if id.is_empty() {
            return;
        }
        leptos::task::spawn_local(async move {
            match browser::send("GET", &editor::zone_url(&srv, &id), &t, None).await {
                Ok((200, body)) => match Editor::open_text(&body) {
                    Ok(e) => {
                        super::autosave::keep_as_previous();
                        state.reset_to(
                            e,
                            &format!("Opened {id} from the server: Publish replaces it there."),
                        );
                        state.from_server.set(Some(id));
                        listed.set(None);
                    }
                    Err(why) => state.note.set(format!("{id} could not be opened: {why}")),
                },
                Ok((status, _)) => state
                    .note
                    .set(format!("Not opened: the server answered {status}.")),
                Err(e) => state.note.set(format!("Not opened: {e}.")),
            }
        });
    };
    view! {
        <form class="publish" class:hidden=move || !publishing.get() on:submit=publish>
            <label>"Server " <input type="url" aria-label="Server" prop:value=move || server.get()
                on:input=move |e| server.set(event_target_value(&e))/></label>
            <label>"Token " <input type="password" autocomplete="off" aria-label="Token"
                placeholder="zgt_…" title="zonegraph token new --scope publish (an admin token to unpublish)"
                prop:value=move || token.get() on:input=move |e| token.set(event_target_value(&e))/></label>
            <button type="submit" class="primary">"Publish"</button>
            <button type="button" class="open-from-server" on:click=list>"Open from server"</button>
            <button type="button" class="unpublish" on:click=unpublish>"Unpublish"</button>
        </form>
        {move || listed.get().map(|zones| view! {
            <div class="share-box server-zones">
                <label>"Zone on the server "
                    <select aria-label="Zone on the server" on:change=move |e| chosen.set(event_target_value(&e))>
                        {zones.into_iter().map(|(id, words)| {
                            let selected = chosen.get_untracked() == id;
                            view! { <option value=id selected=selected>{words}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <button class="primary" on:click=open>"Open"</button>
                <button on:click=move |_| listed.set(None)>"Cancel"</button>
            </div>
        })}
        {move || asking.get().map(|(ask, words, lines)| view! {
            <div class="share-box publish-confirm" role="alertdialog" aria-label="Confirm">
                <div class="confirm-words">{words}{crate::views::sections(lines)}</div>
                <button class="primary confirm-yes" on:click=confirm>
                    {if ask == Ask::Publish { "Yes, publish" } else { "Yes, unpublish" }}
                </button>
                <button class="confirm-no" on:click=move |_| asking.set(None)>"Cancel"</button>
            </div>
        })}
    }
}
