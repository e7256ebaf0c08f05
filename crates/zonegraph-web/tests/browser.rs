//! Component tests in headless Chromium: `cargo test -p zonegraph-web --target
//! wasm32-unknown-unknown` (wasm-bindgen-test-runner drives chromedriver).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed lookup is a failed test

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement};
use zonegraph_web::app::App;
use zonegraph_web::pages::run::{RunPage, StatusLine, status_lines};
use zonegraph_web::scenarios::{self, Scenario};
use zonegraph_web::share::{ShareError, decode_share, encode_share};

wasm_bindgen_test_configure!(run_in_browser);

const CRYPT: &str = include_str!("../../../zones/crypt_valdris.json");

/// Lets Leptos and the browser run: effects, animation frames, re-renders.
async fn settle() {
    gloo_timers::future::TimeoutFuture::new(30).await;
}

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// Mounts the whole app at `#fragment` in a fresh container.
fn mount_app(fragment: &str) -> (Element, Box<dyn std::any::Any>) {
    web_sys::window()
        .unwrap()
        .location()
        .set_hash(fragment)
        .unwrap();
    let div = document().create_element("div").unwrap();
    div.set_attribute("style", "width:1200px;height:800px")
        .unwrap();
    document().body().unwrap().append_child(&div).unwrap();
    let el: HtmlElement = div.clone().dyn_into().unwrap();
    let handle = leptos::mount::mount_to(el, App);
    (div, Box::new(handle))
}

/// Mounts the run page (its own bundle's only page) for `token` in a fresh container.
fn mount_run(token: &str) -> (Element, Box<dyn std::any::Any>) {
    let div = document().create_element("div").unwrap();
    div.set_attribute("style", "width:1200px;height:800px")
        .unwrap();
    document().body().unwrap().append_child(&div).unwrap();
    let el: HtmlElement = div.clone().dyn_into().unwrap();
    let token = token.to_string();
    let handle = leptos::mount::mount_to(el, move || {
        leptos::view! { <RunPage token=token.clone()/> }
    });
    (div, Box::new(handle))
}

/// The run page's words from the chat's status text, as the page lays them out: the
/// headline, then each line (a fork option as its `!zone go N` and the chat's words).
fn status_on_page(root: &Element) -> Vec<String> {
    let mut out = vec![text(&find(root, ".run-head h1"))];
    let lines = root.query_selector_all(".status-lines > li").unwrap();
    for i in 0..lines.length() {
        out.push(text(&lines.item(i).unwrap().dyn_into::<Element>().unwrap()));
    }
    out
}

/// What [`status_on_page`] must read for the chat's `status` reply.
fn status_expected(status: &zonegraph_core::chat::Reply) -> Vec<String> {
    let choices: Vec<zonegraph_web::doc::Choice> = status
        .choices
        .iter()
        .map(|c| zonegraph_web::doc::Choice {
            number: c.number,
            line: c.line,
            words: c.words.clone(),
        })
        .collect();
    let (headline, lines) = status_lines(&status.text, &choices);
    let mut out = vec![headline];
    out.extend(lines.into_iter().map(|l| match l {
        StatusLine::Text(t) => t,
        StatusLine::Option { number, words } => format!("!zone go {number}{words}"),
    }));
    out
}

fn find(root: &Element, selector: &str) -> Element {
    root.query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no element matches {selector}"))
}

fn count(root: &Element, selector: &str) -> u32 {
    root.query_selector_all(selector).unwrap().length()
}

/// A bubbling click, as a user's (SVG elements have no `click()`).
fn click(el: &Element) {
    let init = web_sys::MouseEventInit::new();
    init.set_bubbles(true);
    init.set_button(0);
    let ev = web_sys::MouseEvent::new_with_mouse_event_init_dict("click", &init).unwrap();
    el.dispatch_event(&ev).unwrap();
}

fn button(root: &Element, text: &str) -> Element {
    let all = root.query_selector_all("button").unwrap();
    (0..all.length())
        .filter_map(|i| all.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .find(|b| b.text_content().unwrap_or_default().trim() == text)
        .unwrap_or_else(|| panic!("no button {text:?}"))
}

fn text(el: &Element) -> String {
    el.text_content().unwrap_or_default()
}

#[wasm_bindgen_test]
async fn the_crypt_map_draws_every_room_with_names() {
    let (root, _app) = mount_app("zone/crypt_valdris");
    settle().await;
    assert_eq!(count(&root, "g.room"), 8);
    assert_eq!(count(&root, "g.passage"), 9);
    let side = find(&root, "g.passage[data-edge='3']");
    assert!(
        side.get_attribute("class")
            .unwrap()
            .contains("l-perception")
    );
    assert_eq!(
        side.get_attribute("aria-label").unwrap(),
        "Passage from Branching Passage to Side Chapel, choice 2 at the fork, locked: \
         Perception DC 12"
    );
    // The player's view hides the undiscovered secret.
    let toggle = find(&root, ".toggle input");
    let toggle: web_sys::HtmlInputElement = toggle.dyn_into().unwrap();
    toggle.click();
    settle().await;
    assert_eq!(count(&root, "g.room"), 7);
    assert_eq!(count(&root, "g.k-secret"), 0);
}

#[wasm_bindgen_test]
async fn clicking_a_fork_option_plays_go_n() {
    let (root, _app) = mount_app("zone/crypt_valdris");
    settle().await;
    click(&button(&root, "Start run"));
    settle().await;
    click(&button(&root, "Advance"));
    settle().await;
    click(&button(&root, "Advance"));
    settle().await;
    // At the fork: the current room is marked, and its options are numbered on the map.
    let current = find(&root, "g.room.current");
    assert_eq!(
        current.get_attribute("data-node").unwrap(),
        "crypt_valdris.fork"
    );
    assert!(count(&root, "g.room.option") >= 1);
    assert_eq!(count(&root, "g.room.visited"), 3);
    // The locked passage's reason, frozen at arrival.
    click(&find(&root, "g.passage[data-edge='3']"));
    settle().await;
    let details = text(&find(&root, ".details"));
    assert!(details.contains("vs DC 12 —"), "{details}");
    // Option 1 (Main Hall) is always open: clicking it on the map is `go 1`.
    click(&find(
        &root,
        "g.room.option.open[data-node='crypt_valdris.main_hall']",
    ));
    settle().await;
    let transcript = text(&find(&root, ".transcript"));
    assert!(transcript.contains("› go 1"), "{transcript}");
    let current = find(&root, "g.room.current");
    assert_eq!(
        current.get_attribute("data-node").unwrap(),
        "crypt_valdris.main_hall"
    );
    assert_eq!(count(&root, "g.room.visited"), 4);
    assert!(count(&root, "g.passage.walked") >= 3);
    // Step back undoes it.
    click(&button(&root, "↶ Step back"));
    settle().await;
    let current = find(&root, "g.room.current");
    assert_eq!(
        current.get_attribute("data-node").unwrap(),
        "crypt_valdris.fork"
    );
}

/// The viewer's links are deflated by the browser's own `CompressionStream`: the core reads
/// each back (zlib checksum included) to the same text, and a zone too large for a link is
/// refused before the browser is asked.
#[wasm_bindgen_test]
async fn the_browser_deflates_links_the_core_reads() {
    for (file, text) in zonegraph_web::zones::SHIPPED {
        let link = encode_share(text).await.unwrap();
        // zlib-wrapped (RFC 1950: its first byte 0x78 is base64url `e`), so the core checks
        // its Adler-32 checksum.
        assert!(link.starts_with("z1:e"), "{file}: {link}");
        assert_eq!(
            zonegraph_core::share::decode(&link).as_deref(),
            Ok(*text),
            "{file}"
        );
        assert_eq!(decode_share(&format!("#{link}")).as_deref(), Ok(*text));
        assert!(
            link.len() < text.len(),
            "{file}: the link is compressed ({} of {} bytes)",
            link.len(),
            text.len()
        );
    }
    let huge = " ".repeat(zonegraph_core::share::MAX_INFLATED + 1);
    assert_eq!(
        encode_share(&huge).await.map_err(|e| e.to_string()),
        Err(format!(
            "zone is {} bytes, over the share-link limit of {}",
            huge.len(),
            zonegraph_core::share::MAX_INFLATED
        ))
    );
    assert!(matches!(
        encode_share(&huge).await,
        Err(ShareError::Link(_))
    ));
}

#[wasm_bindgen_test]
async fn untrusted_labels_are_text_never_markup() {
    let evil_label = "<script>alert(1)</script>";
    let evil_attr = "\"><svg onload=alert(1)>";
    let evil_img = "<img src=x onerror=\"window.__xss=1\">";
    let zone = CRYPT
        .replace("Crypt Threshold", &evil_label.replace('"', "\\\""))
        .replace("Bone Corridor", &evil_attr.replace('"', "\\\""))
        .replace(
            "A faint draft from a crack in the wall.",
            &evil_img.replace('"', "\\\""),
        )
        .replace(
            "Cold air spills from the crypt mouth. Somewhere below, bones shift.",
            &evil_img.replace('"', "\\\""),
        );
    let link = encode_share(&zone).await.unwrap();
    let (root, _app) = mount_app(&link);
    settle().await;
    assert_eq!(count(&root, "g.room"), 8, "the shared zone is drawn");
    assert_eq!(count(&root, "script"), 0);
    assert_eq!(count(&root, "img"), 0);
    assert_eq!(count(&root, "svg svg"), 0);
    let entry = find(&root, "g.room[data-node='crypt_valdris.entry']");
    assert!(
        entry
            .get_attribute("aria-label")
            .unwrap()
            .starts_with(evil_label),
        "the label is an attribute value, verbatim"
    );
    click(&entry);
    settle().await;
    let details = text(&find(&root, ".details"));
    assert!(details.contains(evil_label), "{details}");
    assert!(details.contains(evil_img), "{details}");
    click(&find(&root, "g.passage[data-edge='3']"));
    settle().await;
    assert!(text(&find(&root, ".details")).contains(evil_img));
    let corridor = find(&root, "g.room[data-node='crypt_valdris.corridor']");
    assert!(text(&corridor).contains("\"><svg onload"));
    let xss =
        js_sys::Reflect::get(&web_sys::window().unwrap(), &JsValue::from_str("__xss")).unwrap();
    assert!(xss.is_undefined(), "nothing ran");
}

#[wasm_bindgen_test]
async fn a_bad_share_link_says_what_is_wrong() {
    let (root, _app) = mount_app("z1:not*base64");
    settle().await;
    let problem = text(&find(&root, ".problem"));
    assert!(
        problem.contains("This share link cannot be opened"),
        "{problem}"
    );
    assert!(problem.contains("base64url"), "{problem}");
}

/// Answers `GET /api/runs/{token}` in this page from `runs` (token, body), as the server
/// would; any other token is a 404. The app's own `fetch` call goes through it.
fn serve_runs(runs: &[(String, String)]) {
    let window = web_sys::window().unwrap();
    let map = js_sys::Object::new();
    for (token, body) in runs {
        js_sys::Reflect::set(&map, &token.into(), &body.into()).unwrap();
    }
    js_sys::Reflect::set(&window, &"__zgRuns".into(), &map).unwrap();
    js_sys::Function::new_no_args(
        "if (!window.__zgFetch) {
           window.__zgFetch = window.fetch;
           window.fetch = async (url) => {
             const m = /\\/api\\/runs\\/([^?#]*)$/.exec(String(url));
             if (!m) return window.__zgFetch(url);
             const body = window.__zgRuns[decodeURIComponent(m[1])];
             return new Response(body ?? '{}', {
               status: body === undefined ? 404 : 200,
               headers: { 'content-type': 'application/json' },
             });
           };
         }",
    )
    .call0(&JsValue::NULL)
    .unwrap();
}

/// Waits until `selector` matches in `root` (at most about two seconds).
async fn wait_for(root: &Element, selector: &str) {
    for _ in 0..60 {
        if count(root, selector) > 0 {
            return;
        }
        settle().await;
    }
    panic!("nothing matches {selector}");
}

/// What the page shows a person or a screen reader: the text of the page's body (without
/// the test runner's own output, the body's children that have an id) and every
/// `aria-label` and `title`.
fn page_text() -> String {
    let body = document().body().unwrap();
    let mut out = Vec::new();
    let children = body.children();
    for i in 0..children.length() {
        let child = children.item(i).unwrap();
        if child.id().is_empty() {
            out.push(text(&child));
        }
    }
    let labelled = document()
        .query_selector_all("[aria-label], [title]")
        .unwrap();
    for i in 0..labelled.length() {
        let el: Element = labelled.item(i).unwrap().dyn_into().unwrap();
        for attr in ["aria-label", "title"] {
            out.extend(el.get_attribute(attr));
        }
    }
    out.join("\n")
}

/// Opens the run page of `s`, checks that it draws the player view and shows nothing the
/// view does not hold; with `click_all`, also opens every room's and passage's details.
async fn check_run_page(token: &str, s: &Scenario, click_all: bool) {
    let view = s.view();
    let (root, app) = mount_run(token);
    wait_for(&root, "g.room").await;
    let what = &s.name;
    assert_eq!(count(&root, "g.room"), view.rooms.len() as u32, "{what}");
    assert_eq!(
        count(&root, "g.passage"),
        view.passages.len() as u32,
        "{what}"
    );
    let unknown = view.rooms.iter().filter(|r| r.id.is_none()).count() as u32;
    assert_eq!(count(&root, "g.room.k-unknown"), unknown, "{what}");
    let unknowns = root.query_selector_all("g.room.k-unknown").unwrap();
    for i in 0..unknowns.length() {
        let room: Element = unknowns.item(i).unwrap().dyn_into().unwrap();
        let name = room.get_attribute("aria-label").unwrap();
        assert!(name.starts_with("Unknown room"), "{what}: {name}");
        assert!(text(&room).contains('?'), "{what}: {}", text(&room));
    }
    let status = zonegraph_core::chat::status(&view.status);
    assert_eq!(status_on_page(&root), status_expected(&status), "{what}");
    let forbidden = scenarios::forbidden(&s.zone, &view);
    let mut shown = page_text();
    if click_all {
        for selector in ["g.room", "g.passage"] {
            let all = root.query_selector_all(selector).unwrap();
            for i in 0..all.length() {
                click(&all.item(i).unwrap().dyn_into().unwrap());
                settle().await;
                shown.push_str(&page_text());
            }
        }
    }
    // The gathered text is the page's: the zone's name and the map's own name are in it.
    assert!(
        shown.contains(&view.zone_name) && shown.contains("Map of"),
        "{what}"
    );
    for bad in &forbidden {
        assert!(
            !shown.contains(bad.as_str()),
            "{what}: the page shows {bad:?}"
        );
    }
    drop(app);
    root.remove();
}

#[wasm_bindgen_test]
async fn the_run_page_shows_the_player_view_and_nothing_else() {
    let fixed = scenarios::fixed();
    let random = scenarios::random(11, 30);
    let runs: Vec<(String, String)> = fixed
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("f{i}"), s.payload()))
        .chain(
            random
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("r{i}"), s.payload())),
        )
        .collect();
    serve_runs(&runs);
    // The Crypt's scenarios come first: every details panel is opened on those.
    for (i, s) in fixed.iter().enumerate() {
        check_run_page(&format!("f{i}"), s, s.zone.id == "crypt_valdris").await;
    }
    for (i, s) in random.iter().enumerate() {
        check_run_page(&format!("r{i}"), s, false).await;
    }
}

#[wasm_bindgen_test]
async fn a_failed_perception_check_leaves_an_unknown_room() {
    let s = &scenarios::fixed()[0];
    serve_runs(&[("crypt-failed".to_string(), s.payload())]);
    let (root, _app) = mount_run("crypt-failed");
    wait_for(&root, "g.room.current").await;
    assert_eq!(count(&root, "g.room"), 7, "the Hidden Reliquary is absent");
    let unknown = find(&root, "g.room.k-unknown");
    assert_eq!(unknown.get_attribute("aria-label").unwrap(), "Unknown room");
    click(&unknown);
    settle().await;
    let details = text(&find(&root, ".details"));
    assert!(details.contains("unknown room"), "{details}");
    let side = find(&root, "g.passage.l-perception");
    let name = side.get_attribute("aria-label").unwrap();
    assert_eq!(
        name,
        "Passage from Branching Passage to unknown room, locked: Perception check"
    );
    // The lock's mark is drawn over the passage, outside its button (its name says it).
    assert_eq!(text(&side), "");
    assert_eq!(
        text(&find(&root, ".marks .lock-mark.l-perception")),
        "hidden?"
    );
    let hall = find(&root, "g.room.option.open");
    assert_eq!(
        hall.get_attribute("data-node").unwrap(),
        "crypt_valdris.main_hall"
    );
    let option2 = text(&find(&root, "li.choose"));
    assert!(
        option2.starts_with("!zone go 2something (locked"),
        "{option2}"
    );
}

/// Sets a text field of the playtest form by its caption.
fn set_field(root: &Element, caption: &str, value: &str) {
    let labels = root.query_selector_all("label").unwrap();
    let label: Element = (0..labels.length())
        .filter_map(|i| labels.item(i)?.dyn_into::<Element>().ok())
        .find(|l| {
            l.query_selector("span")
                .ok()
                .flatten()
                .is_some_and(|s| text(&s) == caption)
        })
        .unwrap_or_else(|| panic!("no field {caption}"));
    let input: web_sys::HtmlInputElement = find(&label, "input").dyn_into().unwrap();
    input.set_value(value);
    let ev = web_sys::Event::new("input").unwrap();
    input.dispatch_event(&ev).unwrap();
}

#[wasm_bindgen_test]
async fn view_as_player_draws_the_playtest_as_the_core_lets_the_player_see_it() {
    let (root, _app) = mount_app("zone/crypt_valdris");
    settle().await;
    // The run id whose Perception roll at the fork fails (Wisdom 10).
    set_field(&root, "Run id", scenarios::CRYPT_FAILED);
    settle().await;
    click(&button(&root, "Start run"));
    settle().await;
    click(&button(&root, "Advance"));
    settle().await;
    click(&button(&root, "Advance"));
    settle().await;
    // The designer sees the side chapel and the roll.
    assert_eq!(count(&root, "g.room"), 8);
    assert_eq!(count(&root, "g.room.k-unknown"), 0);
    let toggle: web_sys::HtmlInputElement = find(&root, ".toggle input").dyn_into().unwrap();
    toggle.click();
    settle().await;
    assert_eq!(count(&root, "g.room"), 7);
    assert_eq!(count(&root, "g.room.k-unknown"), 1);
    let map = text(&find(&root, ".map-pane"));
    let labels = page_text();
    for bad in ["Side Chapel", "Hidden Reliquary", "DC 12", "DC 15"] {
        assert!(!map.contains(bad), "the player's map shows {bad}");
        assert!(!labels.contains(bad), "the player's map names {bad}");
    }
    // Its option on the map is still `go 1`.
    click(&find(&root, "g.room.option.open"));
    settle().await;
    let transcript = text(&find(&root, ".transcript"));
    assert!(transcript.contains("› go 1"), "{transcript}");
}
