//! `GET /metrics`: the Prometheus metrics ([`crate::metrics`]) in the text format, for a
//! token of the `metrics` scope (or `admin`, or the operator's). What is a state (live
//! streams, zones served, the events outbox, the host's pause) is read now, at the scrape.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::auth::authorize;
use crate::metrics::{self, Scrape};
use crate::tokens::Need;

/// The media type of Prometheus's text format.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

pub(super) async fn scrape(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Err(r) = authorize(&state, &headers, Need::ReadMetrics).await {
        return r;
    }
    let service = &state.service;
    // The outbox is the database's: an instance that cannot read it now leaves its two
    // gauges out of this scrape (an absent series, not a made-up zero), and says why.
    let outbox = match service.events_outbox().await {
        Ok(o) => o.map(|(waiting, oldest_ms)| {
            (
                waiting,
                Duration::from_millis(u64::try_from(oldest_ms).unwrap_or(0)),
            )
        }),
        Err(e) => {
            tracing::warn!(error = %format_args!("{e:#}"), "metrics: cannot read the events outbox");
            None
        }
    };
    let text = metrics::render(&Scrape {
        streams: state.streams.open(),
        zones: service.zones().len(),
        outbox,
        host_paused: service.host_paused(),
    });
    let mut r = text.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_FORMAT));
    r
}
