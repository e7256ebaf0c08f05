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
    let share_link = Memo::new(move |_| {
        if !sharing.get() {
            return None;
        }
        Some(
            state
                .editor
                .with(|e| share::encode_share(&e.to_json()))
                .map(|f| format!("{}#edit/{f}", browser::base_url()))
                .map_err(|e| format!("No link: {e}.")),
        )
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

/// The publish form, shown while `publishing`: the server's URL and a publish token (one
/// that only publishes: `zonegraph token new --scope publish`), kept only while the page is
/// open.
pub(super) fn form(state: State, publishing: RwSignal<bool>) -> impl IntoView {
    let server = RwSignal::new(browser::origin());
    let token = RwSignal::new(String::new());
    let publish = move |e: leptos::ev::SubmitEvent| {
        e.prevent_default();
        let url = editor::publish_url(&server.get_untracked());
        let (t, json) = (
            token.get_untracked(),
            state.editor.with_untracked(Editor::to_json),
        );
        state.note.set("Publishing…".into());
        leptos::task::spawn_local(async move {
            let words = match browser::post_text(&url, &t, "application/json", &json).await {
                Ok((status, body)) => editor::publish_words(status, &body),
                Err(e) => format!("Not published: {e}."),
            };
            state.note.set(words);
        });
    };
    view! {
        <form class="publish" class:hidden=move || !publishing.get() on:submit=publish>
            <label>"Server " <input type="url" prop:value=move || server.get()
                on:input=move |e| server.set(event_target_value(&e))/></label>
            <label>"Publish token " <input type="password" autocomplete="off"
                placeholder="zgt_…" title="zonegraph token new --scope publish"
                prop:value=move || token.get() on:input=move |e| token.set(event_target_value(&e))/></label>
            <button type="submit" class="primary">"Publish"</button>
        </form>
    }
}
