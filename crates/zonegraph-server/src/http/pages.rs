//! The viewer's pages and files: static files (precompressed, hashed assets cached), each
//! page's content security policy, the security headers, and the answers for unknown paths
//! and methods.

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::{AppState, error, internal};
use tower::ServiceExt as _;
use tower_http::services::ServeDir;

/// Security headers. A page (an HTML document) may not be framed by another site
/// (`frame-ancestors`), is not sniffed as another type, and sends no referrer from its links
/// (a run page's URL holds its token); an API answer is not sniffed either. The assets a page
/// loads (wasm, JS, CSS, sent with their own types) carry none: on the run page's budget the
/// headers of its six answers would cost 0.7 KB on the wire.
pub(super) async fn security_headers(mut r: Response) -> Response {
    let kind = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let h = r.headers_mut();
    if kind.starts_with("text/html") {
        // A viewer page has its whole policy already (`page_policy`); any other page (the
        // "not built" one) at least this.
        h.entry(header::CONTENT_SECURITY_POLICY)
            .or_insert(header::HeaderValue::from_static(
                "default-src 'none'; frame-ancestors 'none'",
            ));
        h.insert(
            header::REFERRER_POLICY,
            header::HeaderValue::from_static("no-referrer"),
        );
    }
    if kind.starts_with("text/html") || kind.starts_with("application/json") {
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            header::HeaderValue::from_static("nosniff"),
        );
    }
    r
}

pub(super) async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}", uri.path()),
    )
}

/// Unknown API routes are JSON 404s; everything else is the built viewer, through
/// tower-http's `ServeDir`: the precompressed `.br` or `.gz` twin of a file when the browser
/// takes it (`trunk build` makes them), the run page's HTML for `/run/{token}`, the
/// designer's `index.html` for the app's other routes. Hashed assets (`name-<16 hex>.ext`,
/// as Trunk names them) are immutable for a year; everything else is revalidated.
pub(super) async fn fallback(State(state): State<AppState>, req: Request) -> Response {
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    if path == "/api" || path.starts_with("/api/") || !matches!(method, Method::GET | Method::HEAD)
    {
        return error(
            StatusCode::NOT_FOUND,
            format!("no route {method} {path}; see docs/guide/server.md"),
        );
    }
    let Some(web) = state.web.clone() else {
        if path == "/" || path.starts_with("/run/") || path == "/index.html" {
            return (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                NOT_BUILT,
            )
                .into_response();
        }
        return error(StatusCode::NOT_FOUND, format!("no file {path}"));
    };
    let Some(rel) = safe_relative(&path) else {
        return error(StatusCode::NOT_FOUND, format!("no file {path}"));
    };
    let file = match page_of(&rel) {
        Some(page) => page.to_string(),
        None => rel,
    };
    if !web.join(&file).is_file() {
        let what = if file == rel_of(&path) {
            format!("no file {path}")
        } else {
            format!(
                "no file {file} in {} for {path}: build the viewer again",
                web.display()
            )
        };
        return error(StatusCode::NOT_FOUND, what);
    }
    let mut req = req;
    match format!("/{file}").parse::<Uri>() {
        Ok(uri) => *req.uri_mut() = uri,
        Err(_) => return error(StatusCode::NOT_FOUND, format!("no file {path}")),
    }
    let served = ServeDir::new(&web)
        .precompressed_br()
        .precompressed_gzip()
        .append_index_html_on_directories(false)
        .oneshot(req)
        .await;
    let mut r = match served {
        Ok(r) => r.map(axum::body::Body::new),
        Err(e) => return internal(&anyhow::anyhow!("cannot read {file}: {e}")),
    };
    if r.status().is_success() || r.status() == StatusCode::NOT_MODIFIED {
        let cache = if is_hashed(&file) {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        let h = r.headers_mut();
        if file.ends_with(".html")
            && let Some(policy) = page_policy(&web.join(&file))
        {
            h.insert(header::CONTENT_SECURITY_POLICY, policy);
        }
        h.insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static(cache),
        );
        h.insert(
            header::VARY,
            header::HeaderValue::from_static("accept-encoding"),
        );
    }
    r
}

/// The Content-Security-Policy of a viewer page, from its file as built: scripts from this
/// server only, wasm allowed to compile (`'wasm-unsafe-eval'`), no inline script but the
/// page's own (by their hashes: Trunk's loader, the run page's theme script), no plugins, no
/// framing: what stops an injected script. It stops there (no `default-src`, no `base-uri`:
/// a `<base>` cannot bring a script from elsewhere past `script-src 'self'`): every byte of
/// it is on the run page's 150 KB budget, which had 0.3 KB left. `None` when the file cannot
/// be read (the page is then not served either).
pub(super) fn page_policy(file: &std::path::Path) -> Option<header::HeaderValue> {
    let html = std::fs::read_to_string(file).ok()?;
    let hashes: String = inline_scripts(&html)
        .map(|body| {
            use base64::Engine as _;
            use sha2::Digest as _;
            let digest = sha2::Sha256::digest(body.as_bytes());
            format!(
                " 'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(digest)
            )
        })
        .collect();
    header::HeaderValue::from_str(&format!(
        "script-src 'self' 'wasm-unsafe-eval'{hashes}; object-src 'none'; \
         frame-ancestors 'none'"
    ))
    .ok()
}

/// The text of each inline `<script>` of `html` (one without `src`), as the browser hashes
/// it: everything between the tag's `>` and `</script>`.
pub(super) fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    let mut rest = html;
    std::iter::from_fn(move || {
        loop {
            let at = rest.find("<script")?;
            let tag_end = at + rest[at..].find('>')?;
            let tag = &rest[at..tag_end];
            let body_start = tag_end + 1;
            let body_end = body_start + rest[body_start..].find("</script>")?;
            let body = &rest[body_start..body_end];
            rest = &rest[body_end..];
            if !tag.contains("src=") {
                return Some(body);
            }
        }
    })
}

pub(super) fn rel_of(path: &str) -> &str {
    path.trim_start_matches('/')
}

/// Where the run page's own build lives in the web root (`trunk build` puts it there).
pub const RUN_PAGE: &str = "run-page/index.html";

/// The HTML file an app route is served from: the run page for `run/…`, the designer's
/// `index.html` for `` and any other path without a dot in its last segment; `None` for a
/// file path.
pub(super) fn page_of(rel: &str) -> Option<&'static str> {
    if rel == "run" || rel.starts_with("run/") {
        return Some(RUN_PAGE);
    }
    let last = rel.rsplit('/').next().unwrap_or("");
    (!last.contains('.')).then_some("index.html")
}

/// Whether a file name carries Trunk's content hash (`zonegraph-web-0123456789abcdef.js`,
/// `…_bg.wasm`; a 64-bit hash in hex without leading zeros, so 10 to 16 digits in practice),
/// so its content never changes under that name.
pub fn is_hashed(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or("");
    let stem = name.split('.').next().unwrap_or("");
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-').is_some_and(|(_, hash)| {
        (10..=16).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// The request path as a relative file path under the web root, or `None` when it could
/// leave it (`..`, hidden files, backslashes, percent-escapes, NULs).
pub(super) fn safe_relative(path: &str) -> Option<String> {
    let trimmed = path.trim_start_matches('/');
    if trimmed.contains(['\\', '%', '\0', ':']) {
        return None;
    }
    let mut parts = Vec::new();
    for seg in trimmed.split('/') {
        if seg.is_empty() {
            continue;
        }
        if seg.starts_with('.') {
            return None;
        }
        parts.push(seg);
    }
    Some(parts.join("/"))
}

pub(super) const NOT_BUILT: &str = "<!doctype html>
<meta charset=\"utf-8\"><title>zonegraph</title>
<h1>zonegraph</h1>
<p>The map viewer is not built, so this server answers its API only.</p>
<p>Build the viewer with <code>trunk build --release</code> in the repository (it writes
<code>dist/</code>), then restart <code>zonegraph serve</code> (or pass <code>--web DIR</code>).</p>
<p>Talk to the bot: <code>POST /api/command</code> with
<code>{\"user\": \"@you:example.org\", \"text\": \"!zone help\"}</code>.</p>
";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn a_page_policy_allows_its_own_inline_scripts_only() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("index.html");
        std::fs::write(
            &page,
            "<html><head><script src=\"/a.js\"></script><script>\n  document.documentElement.dataset.theme = 'dark';\n</script>\
             <script type=module></script></head></html>",
        )
        .unwrap();
        let policy = page_policy(&page).unwrap();
        let policy = policy.to_str().unwrap();
        assert!(
            policy.starts_with(
                "script-src 'self' 'wasm-unsafe-eval' \
                 'sha256-d/8PTl7BE1gXMxdqBfmBX9mCf9/8FYGG8jbAEP71kIg=' \
                 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='; "
            ),
            "{policy}"
        );
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(page_policy(&dir.path().join("missing.html")).is_none());
    }
}
