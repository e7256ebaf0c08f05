//! A run page's live stream (server-sent events): the run view again whenever its run or
//! sheet changes, until the server stops.

use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::watch;

use super::{AppState, error, internal};
use crate::streams::{Full, Slot};

/// Ends the open event streams when the server stops (a graceful stop waits for every
/// connection, and a stream would otherwise never end): `true` once stopping.
#[derive(Clone, Debug)]
pub struct Closing(pub watch::Receiver<bool>);

/// How often an idle event stream sends a comment, so proxies keep it open.
pub(super) const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /api/runs/{token}/events`: server-sent events, one `data:` line per view, each the
/// body `GET /api/runs/{token}` would answer at that moment. The first event is the view
/// when the stream opens (so a page that reconnects misses nothing); then one each time a
/// committed write changes the run's player (a command, the fork timeout, an admin's edit of
/// the sheet) and the view with it. The views come from the run's one feed
/// ([`crate::streams`]), built once per change however many streams follow it; a stream
/// past the run's or the instance's limit is refused (503), and one that reached its
/// lifetime ends (the browser opens it again).
pub(super) async fn run_events(
    State(state): State<AppState>,
    closing: Option<Extension<Closing>>,
    UrlPath(token): UrlPath<String>,
) -> Response {
    let owner = match state.service.run_owner(&token).await {
        Ok(Some(owner)) => owner,
        Ok(None) => return error(StatusCode::NOT_FOUND, "no such run"),
        Err(e) => return internal(&e),
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
pub(super) struct Follow {
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
