//! The API's routes and their JSON handlers: commands, zones and their versions, insight and
//! review, the run views, notices and the OpenAPI document. Each reaches the store through
//! the service.

use axum::Json;
use axum::body::Body;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde::Deserialize;
use serde_json::json;

use zonegraph_core::chat;

use super::auth::{allowed, authorize, caller};
use super::events::run_events;
use super::health::healthz;
use super::metrics::scrape;
use super::{
    AppState, BODY_LIMIT, MAX_ACK_IDS, MAX_USER_LEN, ZONE_BODY_LIMIT, error, internal, read_body,
};
use crate::service::{CommandError, Platform};
use crate::store;
use crate::tokens::{Caller, Need};

/// The API's paths and what answers each: the one list the router is built from, checked
/// against [`crate::openapi::OPERATIONS`] by a test.
pub(super) fn api_routes() -> Vec<(&'static str, MethodRouter<AppState>)> {
    vec![
        ("/api/command", post(command)),
        ("/api/zones", get(zones).post(publish)),
        ("/api/zones/{zone_id}", get(zone).delete(withdraw)),
        ("/api/zones/{zone_id}/versions", get(zone_versions)),
        ("/api/zones/{zone_id}/insight", get(zone_insight)),
        ("/api/zones/{zone_id}/review", post(review)),
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
        ("/metrics", get(scrape)),
    ]
}

/// The paths the router serves under `/api`, `/healthz` and `/metrics` (for the document's
/// test).
pub fn api_paths() -> Vec<&'static str> {
    api_routes().into_iter().map(|(path, _)| path).collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CommandBody {
    user: String,
    text: String,
}

/// Checks a user id: not blank, not too long, no control characters.
pub(super) fn check_user(user: &str) -> Result<(), String> {
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
pub(super) trait ForUser {
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

/// What every transport route that acts for a user checks first: the bearer token (before a
/// byte of the body is read), the JSON body (a malformed one is answered with an example of
/// what was `expected`), the user id, and that the token may act as that user.
pub(super) async fn user_body<T: ForUser + serde::de::DeserializeOwned>(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    expected: &str,
) -> Result<T, Response> {
    let caller = caller(state, headers).await?;
    if !is_json(headers) {
        return Err(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send the body with Content-Type: application/json; expected {expected}"),
        ));
    }
    let bytes = read_body(state, headers, body, BODY_LIMIT).await?;
    let Json(body) =
        Json::<T>::from_bytes(&bytes).map_err(|rejection| json_rejection(&rejection, expected))?;
    check_user(body.user()).map_err(|msg| error(StatusCode::UNPROCESSABLE_ENTITY, msg))?;
    allowed(state, &caller, Need::ActAs(body.user()))?;
    Ok(body)
}

/// Whether the request says its body is JSON (`application/json`, or a `+json` type).
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .is_some_and(|t| {
            t == "application/json" || (t.starts_with("application/") && t.ends_with("+json"))
        })
}

pub(super) async fn command(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body: CommandBody = match user_body(
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
    match state
        .service
        .command(Platform::Http, &body.user, &body.text)
        .await
    {
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
pub(super) fn slow_down(retry_after_ms: u64) -> Response {
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

pub(super) fn json_rejection(r: &JsonRejection, expected: &str) -> Response {
    let status = match r {
        JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
        JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        _ => r.status(),
    };
    error(status, format!("{}; expected {expected}", r.body_text()))
}

pub(super) async fn zones(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadZones).await {
        return r;
    }
    let served = state.service.served();
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
pub(super) fn version_json(v: &crate::db::VersionRow) -> serde_json::Value {
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
pub(super) fn author(headers: &HeaderMap, caller: &Caller, source: &str) -> store::Author {
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
pub(super) async fn zone_versions(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadZones).await {
        return r;
    }
    match state.service.zone_history(&zone_id).await {
        Ok(list) if list.is_empty() => error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}")),
        Ok(list) => Json(json!({
            "zone_id": zone_id,
            "versions": list.iter().map(version_json).collect::<Vec<_>>(),
        }))
        .into_response(),
        Err(e) => internal(&e),
    }
}

/// `GET /api/zones/{zone_id}/insight[?version=SEQ][&since=YYYY-MM-DD]`: what players do in a
/// zone version (the newest by default), counts only ([`crate::store::insight`]). Publish scope.
pub(super) async fn zone_insight(
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
            "since" => match crate::clock::parse_day(value) {
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
    match state.service.insight(&zone_id, version, since).await {
        Ok(Some(found)) => Json(found).into_response(),
        Ok(None) => error(
            StatusCode::NOT_FOUND,
            match version {
                Some(v) => format!("no version {v} of zone {zone_id:?}"),
                None => format!("no zone {zone_id:?}"),
            },
        ),
        Err(e) => internal(&e),
    }
}

/// `DELETE /api/zones/{zone_id}` (`?force=true` to withdraw it while players have runs
/// there): withdraws the zone on every instance (see [`Store::withdraw`]). 200 with
/// `{"withdrawn", "seq", "players_told", "zones"}`; 404 for a zone not served; 409 while
/// players have runs there; 422 when the other zones do not stand without it.
pub(super) async fn withdraw(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let caller = match authorize(&state, &headers, Need::Withdraw).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let force = match force_query(query.as_deref()) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let by = author(&headers, &caller, "DELETE /api/zones");
    match state.service.withdraw(&zone_id, force, by).await {
        Ok(Ok(w)) => {
            tracing::info!(
                zone = w.zone_id,
                seq = w.seq,
                players_told = w.players_told,
                zones = w.zones,
                "withdrew zone"
            );
            Json(json!({
                "withdrawn": w.zone_id,
                "seq": w.seq,
                "players_told": w.players_told,
                "zones": w.zones,
            }))
            .into_response()
        }
        Ok(Err(store::Refused::Unknown(id))) => error(
            StatusCode::NOT_FOUND,
            format!("no zone {id:?} is served; nothing was changed"),
        ),
        Ok(Err(store::Refused::Active { zone_id, players })) => error(
            StatusCode::CONFLICT,
            format!(
                "{players} player(s) have a run in zone {zone_id:?}: withdraw it with \
                 ?force=true to tell them (their runs go on to their end); nothing was changed"
            ),
        ),
        Ok(Err(store::Refused::Findings(checked))) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({
                "error": "the other zones have errors without this one; nothing was changed",
                "zones": checked,
            })),
        )
            .into_response(),
        Ok(Err(other)) => internal(&anyhow::anyhow!("unexpected refusal: {other:?}")),
        Err(e) => internal(&e),
    }
}

/// `?force=true` (or none): whether a change that players in the zone would feel is meant.
#[allow(clippy::result_large_err)] // a Response is the error we hand back
fn force_query(query: Option<&str>) -> Result<bool, Response> {
    match query {
        None | Some("") => Ok(false),
        Some("force=true") | Some("force=1") => Ok(true),
        Some(other) => Err(error(
            StatusCode::BAD_REQUEST,
            format!("unknown query {other:?}: the only one is force=true; nothing was changed"),
        )),
    }
}

/// `POST /api/zones`: publishes the zone file in the body (see [`Store::publish`]): 200 with
/// `{"published", "file", "replaced", "zones", "findings"}`; 422 with the findings of every
/// zone file in `zonegraph check --json`'s shape (`{"zones": [...]}`, plus `"error"`) when
/// it, checked with the zones served, has errors; nothing changes then.
/// A zone file sent as a request's body, read once the caller may publish: JSON, by its
/// content type (a form or a `text/plain` POST is what a page on another site can send
/// without asking first), at most [`ZONE_BODY_LIMIT`] bytes of UTF-8.
pub(super) async fn zone_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<String, Response> {
    if !is_json(headers) {
        return Err(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the zone file with Content-Type: application/json; nothing was changed",
        ));
    }
    let bytes = read_body(state, headers, body, ZONE_BODY_LIMIT).await?;
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            format!(
                "the body is not UTF-8 (byte {}); expected a zone file; nothing was changed",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Seconds a second review of a zone is told to wait (`Retry-After`).
const REVIEW_RETRY_AFTER: &str = "2";

/// `POST /api/zones/{zone_id}/review` with a zone file: what publishing it over the zone's
/// served version would do (see [`crate::store::review`]); nothing is written. 200 with `{"version",
/// "impact", "players", "replay", "left_out", "words"}`; 404 for a zone not served; 422 for a
/// body that is no zone file; 429 (with `Retry-After`) while another review of the zone runs.
pub(super) async fn review(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
    body: Body,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::Publish).await {
        return r;
    }
    let body = match zone_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    use crate::store::review::Unreviewable;
    match state.service.review(&zone_id, body).await {
        Ok(Ok(found)) => Json(found).into_response(),
        Ok(Err(Unreviewable::Busy)) => {
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                format!("a review of {zone_id:?} is running; ask again when it is done"),
            );
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static(REVIEW_RETRY_AFTER),
            );
            r
        }
        Ok(Err(Unreviewable::NoZone)) => {
            error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}"))
        }
        Ok(Err(Unreviewable::BadFile(why))) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body is not a zone file: {why}"),
        ),
        Ok(Err(Unreviewable::Stopped)) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the review was given up before it ended",
        ),
        Err(e) => internal(&e),
    }
}

pub(super) async fn publish(
    State(state): State<AppState>,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    body: Body,
) -> Response {
    let caller = match authorize(&state, &headers, Need::Publish).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let force = match force_query(query.as_deref()) {
        Ok(f) => f,
        Err(r) => return r,
    };
    // Forced over players in the zone, a publish is a withdrawal for them: it needs what a
    // withdrawal needs.
    if force && let Err(r) = allowed(&state, &caller, Need::Withdraw) {
        return r;
    }
    let body = match zone_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let by = author(&headers, &caller, "POST /api/zones");
    match state.service.publish(body, by, force).await {
        Ok(Ok(p)) => {
            tracing::info!(
                zone = p.zone_id,
                seq = p.seq,
                file = p.file,
                unchanged = p.unchanged,
                players_affected = p.players_affected,
                zones = p.zones,
                "published zone"
            );
            Json(json!({
                "published": p.zone_id,
                "file": p.file,
                "replaced": p.replaced,
                "seq": p.seq,
                "unchanged": p.unchanged,
                "players_affected": p.players_affected,
                "zones": p.zones,
                "findings": { "zones": p.findings },
                "warning": p.warning,
            }))
            .into_response()
        }
        Ok(Err(store::Refused::Findings(checked))) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({
                "error": "the zone files have errors with this one; nothing was changed",
                "zones": checked,
            })),
        )
            .into_response(),
        Ok(Err(store::Refused::Strands { zone_id, players })) => error(
            StatusCode::CONFLICT,
            format!(
                "{players} player(s) in zone {zone_id:?} stand in a room this version removes, \
                 or before a way on it removes: publish it with ?force=true (a token that may \
                 withdraw zones; their runs go on, on the version they started on); nothing \
                 was changed"
            ),
        ),
        Ok(Err(store::Refused::BadId(id))) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "zone id {id:?} cannot name a file: use letters, digits, '_', '-' and '.'; \
                 nothing was changed"
            ),
        ),
        Ok(Err(store::Refused::FileTaken { zone_id, file })) => error(
            StatusCode::CONFLICT,
            format!(
                "zone {zone_id:?} would be written to {file}, which is another zone's file \
                 (file names are compared without case); choose another zone id; nothing was \
                 changed"
            ),
        ),
        Ok(Err(other)) => internal(&anyhow::anyhow!("unexpected refusal: {other:?}")),
        Err(e) => internal(&e),
    }
}

pub(super) async fn zone(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(zone_id): UrlPath<String>,
) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadZones).await {
        return r;
    }
    match state.service.zones().iter().find(|z| z.id == zone_id) {
        Some(z) => Json(z.to_file()).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("no zone {zone_id:?}")),
    }
}

pub(super) async fn run(
    State(state): State<AppState>,
    UrlPath(token): UrlPath<String>,
) -> Response {
    match state.service.run_view(&token).await {
        Ok(Some(view)) => Json(view).into_response(),
        // The same answer for a malformed and an unknown token: nothing to learn from it.
        Ok(None) => error(StatusCode::NOT_FOUND, "no such run"),
        Err(e) => internal(&e),
    }
}

/// `GET /api/players/{user}/run`: the player's run (active, else the latest) with its link
/// and token, and its player view; 404 when the player has none.
pub(super) async fn player_run(
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
    match state.service.player_run(&user).await {
        Ok(Some(run)) => Json(run).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("{user} has no run")),
        Err(e) => internal(&e),
    }
}

/// `GET /api/openapi.json`: the API described ([`crate::openapi::document`]), built once.
pub(super) async fn openapi() -> Response {
    static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let body = DOCUMENT.get_or_init(|| crate::openapi::document().to_string());
    ([(header::CONTENT_TYPE, "application/json")], body.as_str()).into_response()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NoticesBody {
    user: String,
}

/// `POST /api/notices`: the user's queued notices, oldest first, with their ids. They stay
/// queued (and come again) until acknowledged.
pub(super) async fn notices(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body: NoticesBody =
        match user_body(&state, &headers, body, "{\"user\": \"@alice:example.org\"}").await {
            Ok(b) => b,
            Err(r) => return r,
        };
    match state.service.notices(&body.user).await {
        Ok(list) => Json(json!({ "notices": list })).into_response(),
        Err(e) => internal(&e),
    }
}

/// `GET /api/notices`: notices change state when taken, so they are not a GET.
pub(super) async fn notices_by_get() -> Response {
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
pub(super) struct AckBody {
    user: String,
    ids: Vec<i64>,
}

/// `POST /api/notices/ack`: the notices `ids` were delivered; they leave the queue.
pub(super) async fn ack_notices(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body: AckBody = match user_body(
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
