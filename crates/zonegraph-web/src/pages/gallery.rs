//! The gallery: the shipped zones as cards, and ways to open another zone (a file, dropped or
//! chosen, or pasted JSON).

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::doc::{self, Loaded};
use crate::{browser, map, model, share};

/// A zone held in memory for `#local`: one opened here that is too large for a share link.
#[derive(Clone, Debug, Default)]
pub struct LocalZone(pub RwSignal<Option<(String, String)>>);

/// Opens zone text: as a share link when it fits, else in memory (`#local`); in the
/// editor (`#edit/…`) when `edit`.
async fn open_text(local: LocalZone, file: String, text: String, edit: bool) {
    let prefix = if edit { "edit/" } else { "" };
    match share::encode_share(&text).await {
        Ok(fragment) => browser::set_hash(&format!("{prefix}{fragment}")),
        Err(_) => {
            local.0.set(Some((file, text)));
            browser::set_hash(&format!("{prefix}local"));
        }
    }
}

/// The shipped zones, and ways to open another one.
#[component]
pub fn Gallery() -> impl IntoView {
    let local = expect_context::<LocalZone>();
    let pasted = RwSignal::new(String::new());
    let message = RwSignal::new(None::<String>);
    let drag_over = RwSignal::new(false);
    // Files and pastes open in the editor rather than the preview.
    let in_editor = RwSignal::new(false);

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
                            <a class="card-edit" href=format!("#edit/zone/{id}")
                                aria-label=format!("Edit {} in the editor", z.name)>"Edit"</a>
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
                    Ok(text) => open_text(local, name, text, in_editor.get_untracked()).await,
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
        move |edit: bool| {
            let text = pasted.get_untracked();
            if text.trim().is_empty() {
                message.set(Some("Paste a zone's JSON first.".into()));
                return;
            }
            // Check here so a mistake is shown next to the text, not on another page.
            match doc::load("pasted zone", &text) {
                Ok(_) => leptos::task::spawn_local(open_text(
                    local.clone(),
                    "pasted zone".into(),
                    text,
                    edit,
                )),
                Err(e) => message.set(Some(format!("This is not a zone: {e}"))),
            }
        }
    };

    view! {
        <section class="gallery">
            <h1>"Zones"</h1>
            <p class="lead">"Pick a zone to preview its map, check it and playtest it — or open your own, or "
                <a href="#edit">"build a new zone in the editor"</a>"."</p>
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
                <div class="row">
                    <button class="primary" on:click={
                        let open = open_pasted.clone();
                        move |_| open(false)
                    }>"Preview pasted zone"</button>
                    <button on:click=move |_| open_pasted(true)>"Edit pasted zone"</button>
                    <label class="toggle"><input type="checkbox" prop:checked=move || in_editor.get()
                        on:change=move |e| in_editor.set(event_target_checked(&e))/>"Open files in the editor"</label>
                </div>
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
                <rect class=map::room_class(r.kind) x=model::num(r.x - model::BOX_W / 2.0)
                    y=model::num(r.y - model::BOX_H / 2.0) width="184" height="56" rx="14"></rect>
            }
        })
        .collect_view();
    view! {
        <svg class="thumb" viewBox=map::view_box((m.width, m.height)) aria-hidden="true"
            preserveAspectRatio="xMidYMid meet">
            <g class="thumb-lines">{paths}</g>
            <g class="thumb-rooms">{dots}</g>
        </svg>
    }
}
