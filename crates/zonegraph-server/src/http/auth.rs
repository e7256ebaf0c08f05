//! Who may call the API: the operator's bearer token or a scoped token, a browser's request
//! from another site refused, CORS for the sites `--allow-origin` names, and `--no-auth`'s
//! requests for this machine by name.

use std::net::SocketAddr;
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;

use super::{Access, AppState, error, internal};
use crate::tokens::{self, Caller, Need};

/// Why a request is a browser's from another site, if it is: `Sec-Fetch-Site: cross-site`, or
/// an `Origin` (a browser's, `null` included) that is not the `Host` the request was sent to
/// (nor the `X-Forwarded-Host` a reverse proxy passes on: a page on another site cannot send
/// that header without asking first, which this server grants only to `allowed` origins).
/// Programs that are not browsers send neither, and are not affected; the server's own
/// pages send their own origin; an origin of `allowed` (`--allow-origin`) passes.
pub(super) fn cross_site(headers: &HeaderMap, allowed: &[String]) -> Option<String> {
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

/// CORS for the `--allow-origin` sites, if any: their pages may send the API's requests
/// (a JSON body, the bearer token, `X-Zonegraph-By`) and read the answers. No credentials
/// (cookies) are involved: the API's only credential is the bearer token.
pub(super) fn cors(allowed: &[String]) -> Option<tower_http::cors::CorsLayer> {
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

/// Who sent a request to a transport route, or why it is refused: a browser's request from
/// another site; without the operator's bearer token or a scoped token the database knows
/// (a revoked one is told as revoked); with `--no-auth`, one that does not name this machine
/// in its `Host`.
pub(super) async fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, Response> {
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
                Some(t) if constant_time_eq(t.as_bytes(), expected.expose().as_bytes()) => {
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
/// has the tokens read again first, at most once every [`tokens::MISS_REFRESH`] for the whole
/// server (see [`tokens::TokenBook::miss_turn`]); a miss in between looks its one token up
/// by its hash. So a token made on another machine a moment ago works at its first use, and
/// an unknown one is refused after one indexed read, never parked.
pub(super) async fn scoped_caller(state: &AppState, token: &str) -> Result<Caller, Response> {
    let service = &state.service;
    let mut found = service.tokens().find(token);
    if found.is_none() && tokens::has_token_shape(token) {
        if service.tokens().miss_turn().is_ok() {
            match service.refresh_tokens().await {
                Ok(words) => words.iter().for_each(|w| tracing::warn!("{w}")),
                Err(e) => return Err(internal(&e)),
            }
            found = service.tokens().find(token);
        } else {
            found = match service.look_up_token(token.to_string()).await {
                Ok(g) => g,
                Err(e) => return Err(internal(&e)),
            };
        }
    }
    match found {
        Some(g) => match g.revoked_at_ms {
            Some(at) => Err(unauthorized(&format!(
                "token zgt_{} ({}) was revoked on {}; ask the operator for another",
                g.token_id,
                g.scope,
                crate::clock::utc(at)
            ))),
            None => Ok(Caller::Scoped(g)),
        },
        None => Err(unauthorized("wrong bearer token")),
    }
}

/// [`caller`], then whether that caller may do `need` (403 saying why not).
pub(super) async fn authorize(
    state: &AppState,
    headers: &HeaderMap,
    need: Need<'_>,
) -> Result<Caller, Response> {
    let caller = caller(state, headers).await?;
    allowed(state, &caller, need)?;
    Ok(caller)
}

#[allow(clippy::result_large_err)] // a Response is the error we hand back
pub(super) fn allowed(state: &AppState, caller: &Caller, need: Need<'_>) -> Result<(), Response> {
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

pub(super) fn is_port(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit()) && s.parse::<u16>().is_ok()
}

pub(super) fn unauthorized(msg: &str) -> Response {
    let mut r = error(StatusCode::UNAUTHORIZED, msg);
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    r
}

pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
