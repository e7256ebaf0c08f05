//! The HTTP API (axum): chat commands, zones, run views and their live streams, notices,
//! health and the viewer's files.
//!
//! Every error is a 4xx/5xx with `{"error": "…"}` saying what was wrong; nothing a client
//! sends can panic a handler. The transport routes need the bearer token (or, with
//! `--no-auth`, a request for this machine by name: no DNS rebinding). Commands of one user
//! run one at a time (a per-user async mutex, held until the command is done even when the
//! client has gone); within that, the store's compare-and-sets guard the rows against any
//! other writer (the sweeper, another process). Each user's commands are rate-limited by the
//! core's token bucket; every request has a time limit, and only so many run at once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;

use crate::streams::{Full, Slot, StreamLimits, Streams};
use tower::{ServiceBuilder, ServiceExt as _};
use tower_http::services::ServeDir;
use zonegraph_core::chat;
use zonegraph_core::limits::Rate;

use crate::service::{CommandError, Service};
use crate::store;
use crate::tokens::{self, Caller, Need};

/// Largest request body accepted (a chat command is a few dozen bytes).
pub const BODY_LIMIT: usize = 16 * 1024;
/// Largest zone file `POST /api/zones` takes (a 5,000-room zone is about 2 MB).
pub const ZONE_BODY_LIMIT: usize = 4 * 1024 * 1024;
/// Longest user id accepted (Matrix ids are at most 255 bytes).
pub const MAX_USER_LEN: usize = 255;
/// Most notice ids acknowledged in one request (a queue holds at most 100).
pub const MAX_ACK_IDS: usize = 1000;

/// Who may use the transport routes (`/api/command`, `/api/zones…`, `/api/notices…`).
#[derive(Clone)]
pub enum Access {
    /// `Authorization: Bearer <token>`.
    Token(String),
    /// `--no-auth`: any request whose `Host` names this machine (a loopback name or the
    /// listen address), so a web page elsewhere cannot reach the bot by DNS rebinding.
    Open { listen: SocketAddr },
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Token(_) => f.write_str("Token(<set>)"),
            Access::Open { listen } => write!(f, "Open {{ listen: {listen} }}"),
        }
    }
}

/// How much one server takes on.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Each user's commands (`None`: unlimited, for load tests).
    pub rate: Option<Rate>,
    /// Longest a request may take before it is answered 503 (a command keeps going).
    pub request_timeout: Duration,
    /// Most requests handled at once; more are refused with a 503 at once.
    pub max_in_flight: usize,
    /// The run pages' live streams: per run link, per instance, and how long each lives.
    pub streams: StreamLimits,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rate: Some(Rate::new(2, 10)),
            request_timeout: Duration::from_secs(30),
            max_in_flight: 512,
            streams: StreamLimits::default(),
        }
    }
}

/// What every handler shares.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The one entry to the store every transport calls.
    pub service: Service,
    pub access: Access,
    /// The other sites whose pages may call the API (`--allow-origin`), lowercase.
    pub allow_origins: Arc<[String]>,
    /// The built viewer (index.html and its assets), when there is one.
    pub web: Option<PathBuf>,
    /// The run pages' live streams.
    pub streams: Arc<Streams>,
    /// `/healthz`'s last probe.
    pub health: Arc<HealthProbe>,
}

/// A JSON error response.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn internal(e: &anyhow::Error) -> Response {
    if crate::db::is_unavailable(e) {
        eprintln!("zonegraph: {e:#}");
        let mut r = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database is unavailable; nothing was changed: try again shortly",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("2"));
        return r;
    }
    eprintln!("zonegraph: internal error: {e:#}");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error; see the server log",
    )
}

/// Why a request is a browser's from another site, if it is: `Sec-Fetch-Site: cross-site`, or
/// an `Origin` (a browser's, `null` included) that is not the `Host` the request was sent to
/// (nor the `X-Forwarded-Host` a reverse proxy passes on: a page on another site cannot send
/// that header without asking first, which this server grants only to `allowed` origins).
/// Programs that are not browsers send neither, and are not affected; the server's own
/// pages send their own origin; an origin of `allowed` (`--allow-origin`) passes.
fn cross_site(headers: &HeaderMap, allowed: &[String]) -> Option<String> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(origin) = text("origin")
        && allowed
            .iter()
            .any(|a| a.eq_ignore_ascii_case(origin.trim()))
    {
        return None;
    }
    if text("sec-fetch-site").is_some_and(|s| s.eq_ignore_ascii_case("cross-site")) {
        return Some("Sec-Fetch-Site: cross-site".into());
    }
    let origin = text("origin")?;
    let host = text("host").unwrap_or_default();
    let forwarded = text("x-forwarded-host");
    let authority = origin
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/'));
    match authority {
        Some(a) if a.eq_ignore_ascii_case(host) => None,
        Some(a) if forwarded.is_some_and(|f| a.eq_ignore_ascii_case(f.trim())) => None,
        _ => Some(format!("Origin {origin:?}, not {host:?}")),
    }
}

/// Security headers. A page (an HTML document) may not be framed by another site
/// (`frame-ancestors`), is not sniffed as another type, and sends no referrer from its links
/// (a run page's URL holds its token); an API answer is not sniffed either. The assets a page
/// loads (wasm, JS, CSS, sent with their own types) carry none: on the run page's budget the
/// headers of its six answers would cost 0.7 KB on the wire.
async fn security_headers(mut r: Response) -> Response {
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

/// The API's paths and what answers each: the one list the router is built from, checked
/// against [`crate::openapi::OPERATIONS`] by a test.
fn api_routes() -> Vec<(&'static str, MethodRouter<AppState>)> {
    vec![
        ("/api/command", post(command)),
        (
            "/api/zones",
            get(zones)
                .post(publish)
                .layer(DefaultBodyLimit::max(ZONE_BODY_LIMIT)),
        ),
        ("/api/zones/{zone_id}", get(zone).delete(withdraw)),
        ("/api/zones/{zone_id}/versions", get(zone_versions)),
        ("/api/zones/{zone_id}/insight", get(zone_insight)),
        (
            "/api/zones/{zone_id}/review",
            post(review).layer(DefaultBodyLimit::max(ZONE_BODY_LIMIT)),
        ),
        // A run view of 100 rooms is ≈ 31 KB of JSON, ≈ 2 KB gzipped: it shares a phone's
        // link with the run page's wasm on the first visit.
        (
            "/api/runs/{token}",
            get(run).layer(tower_http::compression::CompressionLayer::new()),
        ),
        ("/api/runs/{token}/events", get(run_events)),
        (
            "/api/players/{user}/run",
            get(player_run).layer(tower_http::compression::CompressionLayer::new()),
        ),
        ("/api/notices", post(notices).get(notices_by_get)),
        ("/api/notices/ack", post(ack_notices)),
        ("/api/openapi.json", get(openapi)),
        ("/healthz", get(healthz)),
    ]
}

/// The paths the router serves under `/api` and `/healthz` (for the document's test).
pub fn api_paths() -> Vec<&'static str> {
    api_routes().into_iter().map(|(path, _)| path).collect()
}

/// The router of the whole server, with its limits.
pub fn router(state: AppState, limits: &Limits) -> Router {
    let cors = cors(&state.allow_origins);
    let mut router = Router::new();
    for (path, method) in api_routes() {
        router = router.route(path, method);
    }
    router
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::map_response(security_headers))
        .layer(tower::util::option_layer(cors))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(
            // A request past the limit is refused at once (waiting for a slot would not be
            // timed: the time limit starts when a request is taken).
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(overloaded))
                .load_shed()
                .layer(tower::limit::GlobalConcurrencyLimitLayer::new(
                    limits.max_in_flight,
                ))
                .timeout(limits.request_timeout),
        )
        .with_state(state)
}

/// CORS for the `--allow-origin` sites, if any: their pages may send the API's requests
/// (a JSON body, the bearer token, `X-Zonegraph-By`) and read the answers. No credentials
/// (cookies) are involved: the API's only credential is the bearer token.
fn cors(allowed: &[String]) -> Option<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    if allowed.is_empty() {
        return None;
    }
    let origins: Vec<header::HeaderValue> = allowed
        .iter()
        .filter_map(|o| header::HeaderValue::from_str(o).ok())
        .collect();
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::HeaderName::from_static("x-zonegraph-by"),
            ])
            .max_age(Duration::from_secs(600)),
    )
}

/// The errors the layers make: too many requests at once, or the time limit (a command
/// may still finish).
async fn overloaded(e: tower::BoxError) -> Response {
    if e.is::<tower::load_shed::error::Overloaded>() {
        let mut r = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is handling as many requests as it takes at once; try again shortly",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        return r;
    }
    if e.is::<tower::timeout::error::Elapsed>() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the request took too long and was given up; a command sent may still be \
             carried out: ask with !zone status before sending it again",
        );
    }
    internal(&anyhow::anyhow!("request failed: {e}"))
}

/// Who sent a request to a transport route, or why it is refused: a browser's request from
/// another site; without the operator's bearer token or a scoped token the database knows
/// (a revoked one is told as revoked); with `--no-auth`, one that does not name this machine
/// in its `Host`.
async fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, Response> {
    if let Some(why) = cross_site(headers, &state.allow_origins) {
        return Err(error(
            StatusCode::FORBIDDEN,
            format!(
                "a request from another site ({why}) is refused: the API answers this \
                 server's own pages and programs that are not browsers"
            ),
        ));
    }
    match &state.access {
        Access::Token(expected) => {
            let sent = headers.get(header::AUTHORIZATION);
            let given = sent
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim);
            match given {
                Some(t) if constant_time_eq(t.as_bytes(), expected.as_bytes()) => {
                    Ok(Caller::Operator)
                }
                Some(t) => scoped_caller(state, t).await,
                None if sent.is_some() => Err(unauthorized(
                    "wrong bearer token: send Authorization: Bearer <token>, the token in ASCII",
                )),
                None => Err(unauthorized(
                    "this server needs an API token: send Authorization: Bearer <token> (the \
                     server's start-up message says where the token is)",
                )),
            }
        }
        Access::Open { listen } => {
            let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
            match host {
                Some(h) if is_local_host(h, *listen) => Ok(Caller::Operator),
                _ => Err(error(
                    StatusCode::FORBIDDEN,
                    format!(
                        "this server runs with --no-auth and answers only requests for \
                         localhost, 127.0.0.1, [::1] or {listen}, not Host {:?} (a web page \
                         must not drive the bot through DNS rebinding); use an API token to \
                         serve other names",
                        host.unwrap_or("")
                    ),
                )),
            }
        }
    }
}

/// A scoped token's caller (see [`crate::tokens`]). A token of its shape not known yet
/// has the tokens read again first (see [`tokens::TokenBook::miss_turn`]: waiting up to a
/// second for the turn): one made on another machine a moment ago works at its first use.
async fn scoped_caller(state: &AppState, token: &str) -> Result<Caller, Response> {
    let store = &state.service.store;
    let mut found = store.tokens().find(token);
    if found.is_none() && tokens::has_token_shape(token) {
        let mut turn = store.tokens().miss_turn();
        if let Err(wait) = turn {
            // Another miss read the tokens less than a second ago: wait for the next turn
            // (that read may have brought this token), then take it if it is still ours.
            tokio::time::sleep(wait).await;
            found = store.tokens().find(token);
            turn = if found.is_none() {
                store.tokens().miss_turn()
            } else {
                Err(Duration::ZERO)
            };
        }
        if turn.is_ok() {
            let reading = store.clone();
            match tokio::task::spawn_blocking(move || reading.refresh_tokens()).await {
                Ok(Ok(words)) => words.iter().for_each(|w| eprintln!("zonegraph: {w}")),
                Ok(Err(e)) => return Err(internal(&e)),
                Err(join) => return Err(internal(&anyhow::anyhow!("token read failed: {join}"))),
            }
            found = store.tokens().find(token);
        }
    }
    match found {
        Some(g) => match g.revoked_at_ms {
            Some(at) => Err(unauthorized(&format!(
                "token zgt_{} ({}) was revoked on {}; ask the operator for another",
                g.token_id,
                g.scope,
                crate::catalog::utc(at)
            ))),
            None => Ok(Caller::Scoped(g)),
        },
        None => Err(unauthorized("wrong bearer token")),
    }
}

/// [`caller`], then whether that caller may do `need` (403 saying why not).
async fn authorize(
    state: &AppState,
    headers: &HeaderMap,
    need: Need<'_>,
) -> Result<Caller, Response> {
    let caller = caller(state, headers).await?;
    allowed(state, &caller, need)?;
    Ok(caller)
}

#[allow(clippy::result_large_err)] // a Response is the error we hand back
fn allowed(state: &AppState, caller: &Caller, need: Need<'_>) -> Result<(), Response> {
    caller
        .may(need, &state.service.settings.admins)
        .map_err(|why| error(StatusCode::FORBIDDEN, why))
}

/// Whether a `Host` header names this machine: a loopback name or the listen address, with
/// any port.
pub fn is_local_host(host: &str, listen: SocketAddr) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6] or [v6]:port
        let Some((v6, after)) = rest.split_once(']') else {
            return false;
        };
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(is_port)) {
            return false;
        }
        v6
    } else {
        match host.split_once(':') {
            Some((name, port)) if is_port(port) => name,
            Some(_) => return false,
            None => host,
        }
    };
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1") || name == listen.ip().to_string()
}

fn is_port(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit()) && s.parse::<u16>().is_ok()
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

/// A request body that names the user it is for.
trait ForUser {
    fn user(&self) -> &str;
}

impl ForUser for CommandBody {
    fn user(&self) -> &str {
        &self.user
    }
}

impl ForUser for NoticesBody {
    fn user(&self) -> &str {
        &self.user
    }
}

impl ForUser for AckBody {
    fn user(&self) -> &str {
        &self.user
    }
}

/// What every transport route that acts for a user checks first: the bearer token, the JSON
/// body (a malformed one is answered with an example of what was `expected`), the user id,
/// and that the token may act as that user.
async fn user_body<T: ForUser>(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<Json<T>, JsonRejection>,
    expected: &str,
) -> Result<T, Response> {
    let caller = caller(state, headers).await?;
    let Json(body) = body.map_err(|rejection| json_rejection(&rejection, expected))?;
    check_user(body.user()).map_err(|msg| error(StatusCode::UNPROCESSABLE_ENTITY, msg))?;
    allowed(state, &caller, Need::ActAs(body.user()))?;
    Ok(body)
}

async fn command(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<CommandBody>, JsonRejection>,
) -> Response {
    let body = match user_body(
        &state,
        &headers,
        body,
        "{\"user\": \"@alice:example.org\", \"text\": \"!zone help\"}",
    )
    .await
    {
        Ok(b) => b,
        Err(r) => return r,
    };
    match state.service.command(&body.user, &body.text).await {
        Ok(answer) => Json(answer).into_response(),
        Err(CommandError::TooLong { limit }) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("\"text\" is longer than {limit} bytes"),
        ),
        Err(CommandError::SlowDown { retry_after_ms }) => slow_down(retry_after_ms),
        Err(CommandError::Failed(e)) => internal(&e),
    }
}

/// 429 in the core's words, with `Retry-After` in whole seconds.
fn slow_down(retry_after_ms: u64) -> Response {
    let words = chat::slow_down(retry_after_ms);
    let mut r = (
        StatusCode::TOO_MANY_REQUESTS,
        Json(json!({ "error": words.text, "retry_after_ms": retry_after_ms })),
    )
        .into_response();
    let secs = retry_after_ms.div_ceil(1000).max(1);
    if let Ok(v) = header::HeaderValue::from_str(&secs.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

fn json_rejection(r: &JsonRejection, expected: &str) -> Response {
    let status = match r {
        JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
        JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        _ => r.status(),
    };
    error(status, format!("{}; expected {expected}", r.body_text()))
}

async fn zones(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadZones).await {
        return r;
    }
    let served = state.service.store.served();
    let list: Vec<_> = served
        .zones
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
                "version": served.versions.get(&z.id).map(version_json),
            })
        })
        .collect();
    Json(json!({ "zones": list, "sequence": served.sequence })).into_response()
}

/// A zone version's record as the API shows it.
fn version_json(v: &crate::db::VersionRow) -> serde_json::Value {
    json!({
        "seq": v.seq,
        "content_hash": v.content_hash,
        "withdrawn": v.withdrawn,
        "source": v.source,
        "made_by": v.made_by,
        "instance": v.instance,
        "created_at_ms": v.created_at_ms,
        "file_kept": v.has_file,
    })
}

/// Who the caller says they are (`X-Zonegraph-By`, for the version record), else "api"; a
/// scoped token's id is recorded with the source, so a version says which token made it.
fn author(headers: &HeaderMap, caller: &Caller, source: &str) -> store::Author {
    let source = match caller {
        Caller::Operator => source.to_string(),
        Caller::Scoped(g) => format!("{source} (token zgt_{})", g.token_id),
    };
    let by = headers
        .get("x-zonegraph-by")
        .and_then(|v| v.to_str().ok())
        .map(|s| {
            s.chars()
                .filter(|c| !c.is_control())
                .take(64)
                .collect::<String>()
        })
        .filter(|s| !s.trim().is_empty());
    store::Author {
        source,
        made_by: by.unwrap_or_else(|| "api".into()),
    }
}

/// `GET /api/zones/{zone_id}/versions`: every version of the zone, oldest first (404 when
/// it never had one).
async fn zone_versions(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadZones).await {
        return r;
    }
    let store = state.service.store.clone();
    let id = zone_id.clone();
    match tokio::task::spawn_blocking(move || store.zone_history(&id)).await {
        Ok(Ok(list)) if list.is_empty() => {
            error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}"))
        }
        Ok(Ok(list)) => Json(json!({
            "zone_id": zone_id,
            "versions": list.iter().map(version_json).collect::<Vec<_>>(),
        }))
        .into_response(),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("versions task failed: {join}")),
    }
}

/// `GET /api/zones/{zone_id}/insight[?version=SEQ][&since=YYYY-MM-DD]`: what players do in a
/// zone version (the newest by default), counts only ([`crate::insight`]). Publish scope.
async fn zone_insight(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadInsight).await {
        return r;
    }
    let (mut version, mut since) = (None, 0);
    for pair in query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "version" => match value.parse::<i64>() {
                Ok(v) => version = Some(v),
                Err(_) => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        format!("version={value:?} is not a version number"),
                    );
                }
            },
            "since" => match crate::insight::parse_day(value) {
                Ok(ms) => since = ms,
                Err(why) => return error(StatusCode::BAD_REQUEST, format!("since: {why}")),
            },
            other => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("unknown query parameter {other:?}: version and since are known"),
                );
            }
        }
    }
    let store = state.service.store.clone();
    let id = zone_id.clone();
    match tokio::task::spawn_blocking(move || store.insight(&id, version, since)).await {
        Ok(Ok(Some(found))) => Json(found).into_response(),
        Ok(Ok(None)) => error(
            StatusCode::NOT_FOUND,
            match version {
                Some(v) => format!("no version {v} of zone {zone_id:?}"),
                None => format!("no zone {zone_id:?}"),
            },
        ),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("insight task failed: {join}")),
    }
}

/// `DELETE /api/zones/{zone_id}` (`?force=true` to withdraw it while players have runs
/// there): withdraws the zone on every instance (see [`Store::withdraw`]). 200 with
/// `{"withdrawn", "seq", "players_told", "zones"}`; 404 for a zone not served; 409 while
/// players have runs there; 422 when the other zones do not stand without it.
async fn withdraw(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let caller = match authorize(&state, &headers, Need::Withdraw).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let force = match query.as_deref() {
        None | Some("") => false,
        Some("force=true") | Some("force=1") => true,
        Some(other) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("unknown query {other:?}: the only one is force=true; nothing was changed"),
            );
        }
    };
    let store = state.service.store.clone();
    let by = author(&headers, &caller, "DELETE /api/zones");
    let id = zone_id.clone();
    match tokio::task::spawn_blocking(move || store.withdraw(&id, force, &by)).await {
        Ok(Ok(Ok(w))) => {
            eprintln!(
                "zonegraph: withdrew zone {} (version {}); {} players told; serving {} zones",
                w.zone_id, w.seq, w.players_told, w.zones
            );
            Json(json!({
                "withdrawn": w.zone_id,
                "seq": w.seq,
                "players_told": w.players_told,
                "zones": w.zones,
            }))
            .into_response()
        }
        Ok(Ok(Err(store::Refused::Unknown(id)))) => error(
            StatusCode::NOT_FOUND,
            format!("no zone {id:?} is served; nothing was changed"),
        ),
        Ok(Ok(Err(store::Refused::Active { zone_id, players }))) => error(
            StatusCode::CONFLICT,
            format!(
                "{players} player(s) have a run in zone {zone_id:?}: withdraw it with \
                 ?force=true to tell them (their runs go on to their end); nothing was changed"
            ),
        ),
        Ok(Ok(Err(store::Refused::Findings(checked)))) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({
                "error": "the other zones have errors without this one; nothing was changed",
                "zones": checked,
            })),
        )
            .into_response(),
        Ok(Ok(Err(other))) => internal(&anyhow::anyhow!("unexpected refusal: {other:?}")),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("withdraw task failed: {join}")),
    }
}

/// `POST /api/zones`: publishes the zone file in the body (see [`Store::publish`]): 200 with
/// `{"published", "file", "replaced", "zones", "findings"}`; 422 with the findings of every
/// zone file in `zonegraph check --json`'s shape (`{"zones": [...]}`, plus `"error"`) when
/// it, checked with the zones served, has errors; nothing changes then.
/// A zone file sent as a request's body: JSON, by its content type (a form or a
/// `text/plain` POST is what a page on another site can send without asking first).
fn zone_body(
    headers: &HeaderMap,
    body: Result<String, axum::extract::rejection::StringRejection>,
) -> Result<String, Box<Response>> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the zone file with Content-Type: application/json; nothing was changed",
        )));
    }
    body.map_err(|r| {
        Box::new(error(
            r.status(),
            format!("{}; expected a zone file", r.body_text()),
        ))
    })
}

/// `POST /api/zones/{zone_id}/review` with a zone file: what publishing it over the zone's
/// served version would do (see [`crate::review`]); nothing is written. 200 with `{"version",
/// "impact", "players", "replay", "words"}`; 404 for a zone not served; 422 for a body that
/// is no zone file.
async fn review(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
    body: Result<String, axum::extract::rejection::StringRejection>,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::Publish).await {
        return r;
    }
    let body = match zone_body(&headers, body) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let store = state.service.store.clone();
    let id = zone_id.clone();
    match tokio::task::spawn_blocking(move || store.review(&id, &body)).await {
        Ok(Ok(Ok(found))) => Json(found).into_response(),
        Ok(Ok(Err(crate::review::Unreviewable::NoZone))) => {
            error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}"))
        }
        Ok(Ok(Err(crate::review::Unreviewable::BadFile(why)))) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body is not a zone file: {why}"),
        ),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("review task failed: {join}")),
    }
}

async fn publish(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<String, axum::extract::rejection::StringRejection>,
) -> Response {
    let caller = match authorize(&state, &headers, Need::Publish).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let body = match zone_body(&headers, body) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let store = state.service.store.clone();
    let by = author(&headers, &caller, "POST /api/zones");
    match tokio::task::spawn_blocking(move || store.publish(&body, &by)).await {
        Ok(Ok(Ok(p))) => {
            eprintln!(
                "zonegraph: published zone {} as version {} ({}); serving {} zones",
                p.zone_id, p.seq, p.file, p.zones
            );
            Json(json!({
                "published": p.zone_id,
                "file": p.file,
                "replaced": p.replaced,
                "seq": p.seq,
                "unchanged": p.unchanged,
                "zones": p.zones,
                "findings": { "zones": p.findings },
                "warning": p.warning,
            }))
            .into_response()
        }
        Ok(Ok(Err(store::Refused::Findings(checked)))) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({
                "error": "the zone files have errors with this one; nothing was changed",
                "zones": checked,
            })),
        )
            .into_response(),
        Ok(Ok(Err(store::Refused::BadId(id)))) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "zone id {id:?} cannot name a file: use letters, digits, '_', '-' and '.'; \
                 nothing was changed"
            ),
        ),
        Ok(Ok(Err(store::Refused::FileTaken { zone_id, file }))) => error(
            StatusCode::CONFLICT,
            format!(
                "zone {zone_id:?} would be written to {file}, which is another zone's file \
                 (file names are compared without case); choose another zone id; nothing was \
                 changed"
            ),
        ),
        Ok(Ok(Err(other))) => internal(&anyhow::anyhow!("unexpected refusal: {other:?}")),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("publish task failed: {join}")),
    }
}

async fn zone(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadZones).await {
        return r;
    }
    match state.service.store.zones().iter().find(|z| z.id == zone_id) {
        Some(z) => Json(z.to_file()).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}")),
    }
}

async fn run(State(state): State<AppState>, UrlPath(token): UrlPath<String>) -> Response {
    let store = state.service.store.clone();
    match tokio::task::spawn_blocking(move || store.run_view(&token)).await {
        Ok(Ok(Some(view))) => Json(view).into_response(),
        // The same answer for a malformed and an unknown token: nothing to learn from it.
        Ok(Ok(None)) => error(StatusCode::NOT_FOUND, "no such run"),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("run view task failed: {join}")),
    }
}

/// `GET /api/players/{user}/run`: the player's run (active, else the latest) with its link
/// and token, and its player view; 404 when the player has none.
async fn player_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(user): UrlPath<String>,
) -> Response {
    let caller = match caller(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    if let Err(msg) = check_user(&user) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, msg);
    }
    if let Err(r) = allowed(&state, &caller, Need::ActAs(&user)) {
        return r;
    }
    let store = state.service.store.clone();
    let public_url = state.service.settings.public_url.clone();
    let u = user.clone();
    match tokio::task::spawn_blocking(move || store.player_run(&u, &public_url)).await {
        Ok(Ok(Some(run))) => Json(run).into_response(),
        Ok(Ok(None)) => error(StatusCode::NOT_FOUND, format!("{user} has no run")),
        Ok(Err(e)) => internal(&e),
        Err(join) => internal(&anyhow::anyhow!("player run task failed: {join}")),
    }
}

/// `GET /api/openapi.json`: the API described ([`crate::openapi::document`]), built once.
async fn openapi() -> Response {
    static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let body = DOCUMENT.get_or_init(|| crate::openapi::document().to_string());
    ([(header::CONTENT_TYPE, "application/json")], body.as_str()).into_response()
}

/// Ends the open event streams when the server stops (a graceful stop waits for every
/// connection, and a stream would otherwise never end): `true` once stopping.
#[derive(Clone, Debug)]
pub struct Closing(pub watch::Receiver<bool>);

/// How often an idle event stream sends a comment, so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /api/runs/{token}/events`: server-sent events, one `data:` line per view, each the
/// body `GET /api/runs/{token}` would answer at that moment. The first event is the view
/// when the stream opens (so a page that reconnects misses nothing); then one each time a
/// committed write changes the run's player (a command, the fork timeout, an admin's edit of
/// the sheet) and the view with it. The views come from the run's one feed
/// ([`crate::streams`]), built once per change however many streams follow it; a stream
/// past the run's or the instance's limit is refused (503), and one that reached its
/// lifetime ends (the browser opens it again).
async fn run_events(
    State(state): State<AppState>,
    closing: Option<Extension<Closing>>,
    UrlPath(token): UrlPath<String>,
) -> Response {
    let store = state.service.store.clone();
    let t = token.clone();
    let owner = match tokio::task::spawn_blocking(move || store.run_owner(&t)).await {
        Ok(Ok(Some(owner))) => owner,
        Ok(Ok(None)) => return error(StatusCode::NOT_FOUND, "no such run"),
        Ok(Err(e)) => return internal(&e),
        Err(join) => return internal(&anyhow::anyhow!("run owner task failed: {join}")),
    };
    let slot = match state.streams.open_stream(&token, &owner) {
        Ok(slot) => slot,
        Err(full) => {
            let why = match full {
                Full::Run(n) => format!(
                    "this run link has {n} live streams open already; the page polls instead"
                ),
                Full::Instance(n) => {
                    format!("this server has {n} live streams open; the page polls instead")
                }
            };
            let mut r = error(StatusCode::SERVICE_UNAVAILABLE, why);
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("10"));
            return r;
        }
    };
    let follow = Follow {
        slot,
        closing: closing.map(|Extension(Closing(rx))| rx),
        ends: tokio::time::Instant::now() + state.streams.limits().lifetime,
        last: Arc::from(""),
    };
    let stream = futures_util::stream::unfold(follow, |mut f| async move {
        let data = f.next().await?;
        Some((
            Ok::<_, std::convert::Infallible>(Event::default().data(&*data)),
            f,
        ))
    });
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    // Never stored: a cached stream would replay an old view.
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    // nginx buffers proxied responses by default, which would hold every event back until
    // its buffer fills; this header turns that off for this response only.
    r.headers_mut().insert(
        header::HeaderName::from_static("x-accel-buffering"),
        header::HeaderValue::from_static("no"),
    );
    r
}

/// One open event stream: its place (and its run's feed), what it has sent, when it ends.
struct Follow {
    slot: Slot,
    closing: Option<watch::Receiver<bool>>,
    ends: tokio::time::Instant,
    /// The last view sent, so an unchanged view is not sent again.
    last: Arc<str>,
}

impl Follow {
    /// The next view to send; `None` ends the stream (the server stops, the run is gone, its
    /// lifetime is over).
    async fn next(&mut self) -> Option<Arc<str>> {
        loop {
            let now: Arc<str> = self.slot.view.borrow_and_update().clone();
            if !now.is_empty() && now != self.last {
                self.last = now.clone();
                return Some(now);
            }
            let (closing, view, ends) = (&mut self.closing, &mut self.slot.view, self.ends);
            let closed = async move {
                match closing {
                    Some(c) if *c.borrow() => {}
                    Some(c) => {
                        let _ = c.changed().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                changed = view.changed() => changed.ok()?,
                () = closed => return None,
                () = tokio::time::sleep_until(ends) => return None,
            }
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoticesBody {
    user: String,
}

/// `POST /api/notices`: the user's queued notices, oldest first, with their ids. They stay
/// queued (and come again) until acknowledged.
async fn notices(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<NoticesBody>, JsonRejection>,
) -> Response {
    let body = match user_body(&state, &headers, body, "{\"user\": \"@alice:example.org\"}").await {
        Ok(b) => b,
        Err(r) => return r,
    };
    match state.service.notices(&body.user).await {
        Ok(list) => Json(json!({ "notices": list })).into_response(),
        Err(e) => internal(&e),
    }
}

/// `GET /api/notices`: notices change state when taken, so they are not a GET.
async fn notices_by_get() -> Response {
    let mut r = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "use POST /api/notices with {\"user\": \"…\"} to take notices, then POST \
         /api/notices/ack with {\"user\": \"…\", \"ids\": […]} once they are delivered",
    );
    r.headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static("POST"));
    r
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AckBody {
    user: String,
    ids: Vec<i64>,
}

/// `POST /api/notices/ack`: the notices `ids` were delivered; they leave the queue.
async fn ack_notices(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<AckBody>, JsonRejection>,
) -> Response {
    let body = match user_body(
        &state,
        &headers,
        body,
        "{\"user\": \"@alice:example.org\", \"ids\": [1, 2]}",
    )
    .await
    {
        Ok(b) => b,
        Err(r) => return r,
    };
    if body.ids.len() > MAX_ACK_IDS {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("\"ids\" has more than {MAX_ACK_IDS} ids"),
        );
    }
    match state.service.ack_notices(&body.user, body.ids).await {
        Ok(n) => Json(json!({ "acknowledged": n })).into_response(),
        Err(e) => internal(&e),
    }
}

/// How long a health probe's result answers `/healthz`: at most one probe (one write) per
/// this, however often it is asked.
pub const HEALTH_PROBE_EVERY: Duration = Duration::from_secs(1);

/// The last health probe: when, and why the database could not be written (none: it could).
#[derive(Debug, Default)]
pub struct HealthProbe(tokio::sync::Mutex<Option<(tokio::time::Instant, Option<String>)>>);

/// 200 when a write can be committed; 503 when not. The probe (a write) runs at most once per
/// [`HEALTH_PROBE_EVERY`], shared by every request meanwhile. Why it failed is told to a
/// request that carries the API's token (and logged); others get no detail of the database.
async fn healthz(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let failed = {
        let mut last = state.health.0.lock().await;
        match &*last {
            Some((at, failed)) if at.elapsed() < HEALTH_PROBE_EVERY => failed.clone(),
            _ => {
                let store = state.service.store.clone();
                let failed = match tokio::task::spawn_blocking(move || store.healthy()).await {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(format!("{e:#}")),
                    Err(e) => Some(format!("the health check failed: {e}")),
                };
                if let Some(why) = &failed {
                    eprintln!("zonegraph: healthz: {why}");
                }
                *last = Some((tokio::time::Instant::now(), failed.clone()));
                failed
            }
        }
    };
    let Some(why) = failed else {
        return Json(json!({ "status": "ok", "zones": state.service.store.zones().len() }))
            .into_response();
    };
    // (With `--no-auth`, every request this machine's names reach counts as carrying it.)
    let told = caller(&state, &headers).await.is_ok();
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        if told {
            format!("the database cannot be written: {why}")
        } else {
            "the database cannot be written (the reason is in the server's log, and told to \
             requests with the API token)"
                .to_string()
        },
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
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
async fn fallback(State(state): State<AppState>, req: Request) -> Response {
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
fn page_policy(file: &std::path::Path) -> Option<header::HeaderValue> {
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
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
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

fn rel_of(path: &str) -> &str {
    path.trim_start_matches('/')
}

/// Where the run page's own build lives in the web root (`trunk build` puts it there).
pub const RUN_PAGE: &str = "run-page/index.html";

/// The HTML file an app route is served from: the run page for `run/…`, the designer's
/// `index.html` for `` and any other path without a dot in its last segment; `None` for a
/// file path.
fn page_of(rel: &str) -> Option<&'static str> {
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

const NOT_BUILT: &str = "<!doctype html>
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
