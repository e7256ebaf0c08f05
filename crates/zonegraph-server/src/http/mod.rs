//! The HTTP API (axum): chat commands, zones, run views and their live streams, notices,
//! health, the metrics and the viewer's files.
//!
//! Every error is a 4xx/5xx with `{"error": "…"}` saying what was wrong; nothing a client
//! sends can panic a handler. The transport routes need the bearer token (or, with
//! `--no-auth`, a request for this machine by name: no DNS rebinding). Commands of one user
//! run one at a time (a per-user async mutex, held until the command is done even when the
//! client has gone); within that, the store's compare-and-sets guard the rows against any
//! other writer (the sweeper, another process). Each user's commands are rate-limited by the
//! core's token bucket; every request has a time limit, and only so many run at once.

mod api;
mod auth;
mod events;
mod health;
mod metrics;
mod pages;

pub use api::api_paths;
pub use auth::is_local_host;
pub use events::Closing;
pub use health::{HEALTH_PROBE_EVERY, HealthProbe};
pub use metrics::TEXT_FORMAT;
pub use pages::{RUN_PAGE, is_hashed};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;

use crate::streams::{StreamLimits, Streams};
use tower::ServiceBuilder;
use zonegraph_core::limits::Rate;

use crate::service::Service;
use api::api_routes;
use auth::cors;
use pages::{fallback, method_not_allowed, security_headers};

/// Largest request body accepted (a chat command is a few dozen bytes).
pub const BODY_LIMIT: usize = 16 * 1024;
/// Largest zone file `POST /api/zones` takes (a 5,000-room zone is about 2 MB).
pub const ZONE_BODY_LIMIT: usize = 4 * 1024 * 1024;
/// Longest user id accepted (Matrix ids are at most 255 bytes).
pub const MAX_USER_LEN: usize = 255;
/// Most notice ids acknowledged in one request (a queue holds at most 100).
pub const MAX_ACK_IDS: usize = 1000;

/// Who may use the transport routes (`/api/command`, `/api/zones…`, `/api/notices…`).
#[derive(Clone, Debug)]
pub enum Access {
    /// `Authorization: Bearer <token>`.
    Token(crate::secret::Secret),
    /// `--no-auth`: any request whose `Host` names this machine (a loopback name or the
    /// listen address), so a web page elsewhere cannot reach the bot by DNS rebinding.
    Open { listen: SocketAddr },
}

/// How much one server takes on.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Each user's commands (`None`: unlimited, for load tests).
    pub rate: Option<Rate>,
    /// Longest a request may take before it is answered 503 (a command keeps going).
    pub request_timeout: Duration,
    /// How long a request's body may take to arrive once its sender is known (408 after
    /// it): a client that sends half a body and waits holds a request slot no longer.
    pub body_deadline: Duration,
    /// Most requests handled at once; more are refused with a 503 at once.
    pub max_in_flight: usize,
    /// The run pages' live streams: per run link, per instance, and how long each lives.
    pub streams: StreamLimits,
    /// Ended runs a review replays, the most recent (`--review-runs`).
    pub review_runs: usize,
}

impl Limits {
    /// Each user's commands when no rate is given: 2 a second, 10 back to back.
    pub const DEFAULT_RATE: Rate = Rate {
        per_second_milli: 2000,
        burst: 10,
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rate: Some(Limits::DEFAULT_RATE),
            request_timeout: Duration::from_secs(30),
            body_deadline: Duration::from_secs(10),
            max_in_flight: 512,
            streams: StreamLimits::default(),
            review_runs: crate::store::review::REVIEW_RUNS,
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
    /// [`Limits::body_deadline`].
    pub body_deadline: Duration,
}

/// A JSON error response.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

/// A request's body, read only after its caller was known (no slot is held for an anonymous
/// body): at most `limit` bytes (413 past it, told by `Content-Length` before any byte is
/// read), all of it within the server's [`Limits::body_deadline`] (408 after it).
pub(super) async fn read_body(
    state: &AppState,
    headers: &axum::http::HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> Result<axum::body::Bytes, Response> {
    use futures_util::StreamExt;
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over this route's limit of {limit} bytes; nothing was changed"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let read = async {
        let mut data = Vec::with_capacity(declared.map_or(0, |n| n as usize));
        let mut stream = body.into_data_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                error(
                    StatusCode::BAD_REQUEST,
                    format!("the body could not be read: {e}; nothing was changed"),
                )
            })?;
            if data.len() + chunk.len() > limit {
                return Err(too_large());
            }
            data.extend_from_slice(&chunk);
        }
        Ok(axum::body::Bytes::from(data))
    };
    let deadline = state.body_deadline;
    match tokio::time::timeout(deadline, read).await {
        Ok(read) => read,
        Err(_) => Err(error(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the body did not arrive within {} ms; nothing was changed",
                deadline.as_millis()
            ),
        )),
    }
}

fn internal(e: &anyhow::Error) -> Response {
    if crate::db::is_unavailable(e) {
        tracing::warn!(error = %format_args!("{e:#}"), "the database is unavailable");
        let mut r = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database is unavailable; nothing was changed: try again shortly",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("2"));
        return r;
    }
    tracing::error!(error = %format_args!("{e:#}"), "internal error");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error; see the server log",
    )
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
