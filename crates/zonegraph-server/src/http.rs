//! The HTTP API (axum): chat commands, zones, run views, notices, health and the viewer.
//!
//! Every error is a 4xx/5xx with `{"error": "…"}` saying what was wrong; nothing a client
//! sends can panic a handler. Commands of one user run one at a time (a per-user async
//! mutex); within that, the store's compare-and-set guards the run row against any other
//! writer (the sweeper, another process).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;

use zonegraph_core::chat::Reply;

use crate::db::Notice;
use crate::store::{CommandSettings, Store};

/// Largest request body accepted (a chat command is a few dozen bytes).
pub const BODY_LIMIT: usize = 16 * 1024;
/// Longest user id accepted (Matrix ids are at most 255 bytes).
pub const MAX_USER_LEN: usize = 255;
/// Longest command text accepted.
pub const MAX_TEXT_LEN: usize = 4096;

/// What every handler shares.
#[derive(Clone, Debug)]
pub struct AppState {
    pub store: Arc<Store>,
    pub settings: CommandSettings,
    pub api_token: Option<String>,
    /// The built viewer (index.html and its assets), when there is one.
    pub web: Option<PathBuf>,
    pub locks: UserLocks,
}

impl AppState {
    /// One chat command of `user`, answered in the core's words, committed before it returns:
    /// the entry point every transport calls (HTTP here, Matrix next). Serialised per user.
    pub async fn command(&self, user: &str, text: &str) -> anyhow::Result<Vec<Reply>> {
        let store = self.store.clone();
        let settings = self.settings.clone();
        let (u, t) = (user.to_string(), text.to_string());
        self.locks
            .with(user, async move {
                tokio::task::spawn_blocking(move || store.command(&u, &t, &settings)).await
            })
            .await
            .map_err(|e| anyhow::anyhow!("command task failed: {e}"))?
    }

    /// Takes `user`'s queued notices ("picked for you"), oldest first, marking them
    /// delivered: a transport polls this to push them to the player.
    pub async fn take_notices(&self, user: &str) -> anyhow::Result<Vec<Notice>> {
        let store = self.store.clone();
        let u = user.to_string();
        self.locks
            .with(user, async move {
                tokio::task::spawn_blocking(move || store.take_notices(&u)).await
            })
            .await
            .map_err(|e| anyhow::anyhow!("notice task failed: {e}"))?
    }

    /// Puts back notices from [`AppState::take_notices`] that the transport could not
    /// deliver, in their places, for the next attempt.
    pub async fn return_notices(&self, user: &str, ids: Vec<i64>) -> anyhow::Result<()> {
        let store = self.store.clone();
        let u = user.to_string();
        self.locks
            .with(user, async move {
                tokio::task::spawn_blocking(move || store.return_notices(&u, ids)).await
            })
            .await
            .map_err(|e| anyhow::anyhow!("notice task failed: {e}"))?
    }

    /// Users with notices waiting (for a transport that pushes rather than polls per user).
    pub async fn users_with_notices(&self) -> anyhow::Result<Vec<String>> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || store.users_with_notices())
            .await
            .map_err(|e| anyhow::anyhow!("notice task failed: {e}"))?
    }
}

/// One async mutex per user with a command in flight; entries go away when unused.
#[derive(Clone, Debug, Default)]
pub struct UserLocks {
    map: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

impl UserLocks {
    /// Runs `f` while holding `user`'s lock.
    pub async fn with<T>(&self, user: &str, f: impl std::future::Future<Output = T>) -> T {
        let lock = {
            let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(user.to_string()).or_default().clone()
        };
        // Removes the map entry when nobody else waits, even if this future is dropped
        // (a client that hangs up mid-command).
        let _cleanup = Cleanup {
            locks: self,
            user,
            lock: &lock,
        };
        let _held = lock.lock().await;
        f.await
    }
}

struct Cleanup<'a> {
    locks: &'a UserLocks,
    user: &'a str,
    lock: &'a Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let mut map = self.locks.map.lock().unwrap_or_else(|p| p.into_inner());
        // Ours and the map's: nobody else waits, so the entry may go.
        if Arc::strong_count(self.lock) == 2 {
            map.remove(self.user);
        }
    }
}

/// A JSON error response.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn internal(e: &anyhow::Error) -> Response {
    eprintln!("zonegraph: internal error: {e:#}");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error; see the server log",
    )
}

/// The router of the whole server.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/command", post(command))
        .route("/api/zones", get(zones))
        .route("/api/zones/{zone_id}", get(zone))
        .route("/api/runs/{token}", get(run))
        .route("/api/notices", get(notices))
        .route("/healthz", get(healthz))
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

/// Refuses a request without the configured bearer token.
#[allow(clippy::result_large_err)] // a Response is the error we hand back
fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), Response> {
    let Some(expected) = &state.api_token else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(t) if constant_time_eq(t.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(unauthorized("wrong bearer token")),
        None => Err(unauthorized(
            "this server needs an API token: send Authorization: Bearer <token>",
        )),
    }
}

fn unauthorized(msg: &str) -> Response {
    let mut r = error(StatusCode::UNAUTHORIZED, msg);
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    r
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandBody {
    user: String,
    text: String,
}

/// Checks a user id: not blank, not too long, no control characters.
fn check_user(user: &str) -> Result<(), String> {
    if user.trim().is_empty() {
        return Err("\"user\" must not be empty".into());
    }
    if user.len() > MAX_USER_LEN {
        return Err(format!("\"user\" is longer than {MAX_USER_LEN} bytes"));
    }
    if user.chars().any(char::is_control) {
        return Err("\"user\" must not contain control characters".into());
    }
    Ok(())
}

async fn command(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<CommandBody>, JsonRejection>,
) -> Response {
    if let Err(r) = authorize(&state, &headers) {
        return r;
    }
    let Json(body) = match body {
        Ok(b) => b,
        Err(rejection) => return json_rejection(&rejection),
    };
    if let Err(msg) = check_user(&body.user) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, msg);
    }
    if body.text.len() > MAX_TEXT_LEN {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("\"text\" is longer than {MAX_TEXT_LEN} bytes"),
        );
    }
    match state.command(&body.user, &body.text).await {
        Ok(replies) => Json(json!({ "replies": replies })).into_response(),
        Err(e) => internal(&e),
    }
}

fn json_rejection(r: &JsonRejection) -> Response {
    let status = match r {
        JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
        JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        _ => r.status(),
    };
    let hint = "expected {\"user\": \"@alice:example.org\", \"text\": \"!zone help\"}";
    error(status, format!("{}; {hint}", r.body_text()))
}

async fn zones(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Err(r) = authorize(&state, &headers) {
        return r;
    }
    let list: Vec<_> = state
        .store
        .zones()
        .iter()
        .map(|z| {
            json!({
                "zone_id": z.id,
                "name": z.name,
                "tier": z.tier,
                "min_level": z.min_level,
                "max_level": z.max_level,
                "rooms": z.graph.node_count(),
                "passages": z.graph.edge_count(),
            })
        })
        .collect();
    Json(json!({ "zones": list })).into_response()
}

async fn zone(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
) -> Response {
    if let Err(r) = authorize(&state, &headers) {
        return r;
    }
    match state.store.zones().iter().find(|z| z.id == zone_id) {
        Some(z) => Json(z.to_file()).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}")),
    }
}

async fn run(State(state): State<AppState>, UrlPath(token): UrlPath<String>) -> Response {
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || store.run_view(&token)).await {
        Ok(Ok(Some(view))) => Json(view).into_response(),
        // The same answer for a malformed and an unknown token: nothing to learn from it.
        Ok(Ok(None)) => error(StatusCode::NOT_FOUND, "no such run"),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("run view task failed: {join}")),
    }
}

#[derive(Debug, Deserialize)]
struct NoticeQuery {
    user: String,
}

async fn notices(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<NoticeQuery>, QueryRejection>,
) -> Response {
    if let Err(r) = authorize(&state, &headers) {
        return r;
    }
    let Query(q) = match query {
        Ok(q) => q,
        Err(r) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{}; expected ?user=<user id>", r.body_text()),
            );
        }
    };
    if let Err(msg) = check_user(&q.user) {
        return error(StatusCode::BAD_REQUEST, msg);
    }
    match state.take_notices(&q.user).await {
        Ok(list) => Json(json!({ "notices": list })).into_response(),
        Err(e) => internal(&e),
    }
}

async fn healthz(State(state): State<AppState>) -> Response {
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || store.healthy()).await {
        Ok(Ok(())) => {
            Json(json!({ "status": "ok", "zones": state.store.zones().len() })).into_response()
        }
        _ => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database does not answer",
        ),
    }
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}", uri.path()),
    )
}

/// Unknown API routes are JSON 404s; everything else is the viewer: a file of the built
/// app, or its index.html for the app's own routes (`/run/{token}`).
async fn fallback(State(state): State<AppState>, method: Method, uri: Uri) -> Response {
    let path = uri.path();
    if path == "/api" || path.starts_with("/api/") || !matches!(method, Method::GET | Method::HEAD)
    {
        return error(
            StatusCode::NOT_FOUND,
            format!("no route {method} {path}; see README.md, \"Running the bot server\""),
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
    let Some(rel) = safe_relative(path) else {
        return error(StatusCode::NOT_FOUND, format!("no file {path}"));
    };
    let app_route = rel.is_empty() || path.starts_with("/run/") || !rel.contains('.');
    let file = web.join(&rel);
    let serve_index = app_route && !file.is_file();
    let target = if serve_index {
        web.join("index.html")
    } else {
        file
    };
    let ctype = content_type(&target);
    match tokio::task::spawn_blocking(move || std::fs::read(&target)).await {
        Ok(Ok(bytes)) => {
            let cache = if serve_index || rel.ends_with(".html") {
                "no-cache"
            } else {
                "public, max-age=3600"
            };
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, ctype),
                    (header::CACHE_CONTROL, cache),
                ],
                bytes,
            )
                .into_response()
        }
        _ => error(StatusCode::NOT_FOUND, format!("no file {path}")),
    }
}

/// The request path as a relative file path under the web root, or `None` when it could
/// leave it (`..`, hidden files, backslashes, percent-escapes, NULs).
fn safe_relative(path: &str) -> Option<String> {
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

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

const NOT_BUILT: &str = "<!doctype html>
<meta charset=\"utf-8\"><title>zonegraph</title>
<h1>zonegraph</h1>
<p>The map viewer is not built, so this server answers its API only.</p>
<p>Build the viewer with <code>trunk build --release</code> in the repository (it writes
<code>dist/</code>), then restart <code>zonegraph serve</code> (or pass <code>--web DIR</code>).</p>
<p>Talk to the bot: <code>POST /api/command</code> with
<code>{\"user\": \"@you:example.org\", \"text\": \"!zone help\"}</code>.</p>
";
