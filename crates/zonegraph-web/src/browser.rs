//! The few browser calls the viewer makes (location, clipboard, downloads, fetch, files,
//! storage), each a small function so components stay readable.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// The URL fragment without `#`.
pub fn hash() -> String {
    window()
        .and_then(|w| w.location().hash().ok())
        .map(|h| h.trim_start_matches('#').to_string())
        .unwrap_or_default()
}

/// The URL path (`/`, `/run/abc`).
pub fn path() -> String {
    window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default()
}

/// Sets the fragment (a history entry, so Back returns).
pub fn set_hash(fragment: &str) {
    if let Some(w) = window() {
        let _ = w.location().set_hash(fragment);
    }
}

/// Sets the fragment in place (no history entry, no `hashchange`: the page stays as it is).
pub fn replace_hash(fragment: &str) {
    if let Some(h) = window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("#{fragment}")),
        );
    }
}

/// The element at a point of the window, if any (a drop target).
pub fn element_at(x: f64, y: f64) -> Option<web_sys::Element> {
    window()?.document()?.element_from_point(x as f32, y as f32)
}

/// Goes to `url` in place of this page (no history entry).
pub fn replace_location(url: &str) {
    if let Some(w) = window() {
        let _ = w.location().replace(url);
    }
}

/// The page's URL without its fragment.
pub fn base_url() -> String {
    window()
        .and_then(|w| w.location().href().ok())
        .map(|h| h.split('#').next().unwrap_or("").to_string())
        .unwrap_or_default()
}

/// Copies text to the clipboard (best effort: it needs a secure context).
pub fn copy(text: &str) {
    if let Some(w) = window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// Offers `content` as a file download.
pub fn download(file_name: &str, mime: &str, content: &str) -> Result<(), String> {
    let err = |e: wasm_bindgen::JsValue| format!("{e:?}");
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(content));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).map_err(err)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(err)?;
    let doc = window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(err)?
        .dyn_into()
        .map_err(|_| "not an anchor".to_string())?;
    a.set_href(&url);
    a.set_download(file_name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// The browser's `CompressionStream` (web-sys has it only behind its unstable-API flag).
    #[wasm_bindgen(extends = js_sys::Object)]
    type CompressionStream;
    #[wasm_bindgen(constructor, catch)]
    fn new(format: &str) -> Result<CompressionStream, wasm_bindgen::JsValue>;
}

/// `text` as UTF-8, deflated by the browser into a zlib-wrapped stream (RFC 1950:
/// `CompressionStream("deflate")`).
pub async fn deflate(text: &str) -> Result<Vec<u8>, String> {
    let err = |e: wasm_bindgen::JsValue| {
        e.dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .unwrap_or_else(|| format!("{e:?}"))
    };
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let blob = web_sys::Blob::new_with_str_sequence(&parts).map_err(err)?;
    let compressor = CompressionStream::new("deflate").map_err(err)?;
    let deflated = blob
        .stream()
        .pipe_through(compressor.unchecked_ref::<web_sys::ReadableWritablePair>());
    let response = web_sys::Response::new_with_opt_readable_stream(Some(&deflated)).map_err(err)?;
    let buffer = JsFuture::from(response.array_buffer().map_err(err)?)
        .await
        .map_err(err)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// GETs a URL: the status and the body text.
pub async fn fetch_text(url: &str) -> Result<(u16, String), String> {
    let w = window().ok_or("no window")?;
    let resp = JsFuture::from(w.fetch_with_str(url))
        .await
        .map_err(|_| "the server could not be reached".to_string())?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "no response".to_string())?;
    let status = resp.status();
    let text = JsFuture::from(resp.text().map_err(|_| "no body".to_string())?)
        .await
        .map_err(|_| "the answer could not be read".to_string())?
        .as_string()
        .unwrap_or_default();
    Ok((status, text))
}

/// POSTs `body` to `url` with `Authorization: Bearer <token>`: the status and the body text.
pub async fn post_text(
    url: &str,
    token: &str,
    content_type: &str,
    body: &str,
) -> Result<(u16, String), String> {
    send("POST", url, token, Some((content_type, body))).await
}

/// Sends a `method` request to `url` with `Authorization: Bearer <token>` (the token only
/// ever in that header, never in a URL) and, if any, a body of its content type: the status
/// and the body text.
pub async fn send(
    method: &str,
    url: &str,
    token: &str,
    body: Option<(&str, &str)>,
) -> Result<(u16, String), String> {
    let w = window().ok_or("no window")?;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let headers = js_sys::Object::new();
    let set = |k: &str, v: &str| js_sys::Reflect::set(&headers, &k.into(), &v.into()).is_ok();
    if !set("authorization", &format!("Bearer {token}")) {
        return Err("the request could not be made".into());
    }
    if let Some((content_type, body)) = body {
        init.set_body(&wasm_bindgen::JsValue::from_str(body));
        if !set("content-type", content_type) {
            return Err("the request could not be made".into());
        }
    }
    init.set_headers(&headers);
    let resp = JsFuture::from(w.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| {
            format!("{url} could not be reached (a server elsewhere must allow this page)")
        })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "no response".to_string())?;
    let status = resp.status();
    let text = JsFuture::from(resp.text().map_err(|_| "no body".to_string())?)
        .await
        .map_err(|_| "the answer could not be read".to_string())?
        .as_string()
        .unwrap_or_default();
    Ok((status, text))
}

/// Asks the user a yes-or-no question (the browser's own dialog).
pub fn confirm(question: &str) -> bool {
    window()
        .and_then(|w| w.confirm_with_message(question).ok())
        .unwrap_or(false)
}

/// The page's origin (`http://host:port`).
pub fn origin() -> String {
    window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// The answer to a request the page's HTML started before the app loaded: `window[name]`,
/// a promise of `[status, body]` (the run page's `zgRun`). Taken once: later calls get
/// `None`.
pub async fn take_prefetched(name: &str) -> Option<Result<(u16, String), String>> {
    let w = window()?;
    let key = wasm_bindgen::JsValue::from_str(name);
    let promise = js_sys::Reflect::get(&w, &key).ok()?;
    let promise: js_sys::Promise = promise.dyn_into().ok()?;
    let _ = js_sys::Reflect::delete_property(&w, &key);
    let answer = match JsFuture::from(promise).await {
        Ok(a) => a,
        Err(_) => return Some(Err("the server could not be reached".into())),
    };
    let answer: js_sys::Array = answer.dyn_into().ok()?;
    let status = answer.get(0).as_f64().unwrap_or(0.0) as u16;
    let body = answer.get(1).as_string().unwrap_or_default();
    Some(Ok((status, body)))
}

/// The text of a file the user picked or dropped.
pub async fn read_file(file: web_sys::File) -> Result<String, String> {
    JsFuture::from(file.text())
        .await
        .map_err(|_| format!("{} could not be read", file.name()))?
        .as_string()
        .ok_or_else(|| format!("{} is not text", file.name()))
}

/// Forgets a stored value (best effort).
pub fn storage_remove(key: &str) {
    if let Some(Ok(Some(s))) = window().map(|w| w.local_storage()) {
        let _ = s.remove_item(key);
    }
}

pub fn storage_get(key: &str) -> Option<String> {
    window()?.local_storage().ok()??.get_item(key).ok()?
}

pub fn storage_set(key: &str, value: &str) {
    if let Some(s) = window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = s.set_item(key, value);
    }
}

/// Whether the system prefers a dark theme.
pub fn prefers_dark() -> bool {
    window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// Sets `data-theme` on the root element.
pub fn apply_theme(theme: &str) {
    if let Some(root) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("data-theme", theme);
    }
}

/// A CSS custom property as computed on an element.
pub fn css_var(el: &web_sys::Element, name: &str) -> String {
    window()
        .and_then(|w| w.get_computed_style(el).ok().flatten())
        .and_then(|s| s.get_property_value(name).ok())
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// Milliseconds since the page loaded (for frame timings).
pub fn now_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}
