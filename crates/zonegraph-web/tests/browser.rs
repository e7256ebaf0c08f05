//! Component tests in headless Chromium: `cargo test -p zonegraph-web --target
//! wasm32-unknown-unknown` (wasm-bindgen-test-runner drives chromedriver).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed lookup is a failed test

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement};
use zonegraph_web::app::App;
use zonegraph_web::share::encode_share;

wasm_bindgen_test_configure!(run_in_browser);

const CRYPT: &str = include_str!("../../../zones/crypt_valdris.json");

/// Lets Leptos and the browser run: effects, animation frames, re-renders.
async fn settle() {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 30)
            .unwrap();
    });
    JsFuture::from(p).await.unwrap();
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
    let link = encode_share(&zone).unwrap();
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
