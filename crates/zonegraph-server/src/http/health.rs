//! `/healthz`: whether this instance can write to its database, probed at most every
//! [`HEALTH_PROBE_EVERY`].

use std::time::Duration;

use super::auth::caller;
use super::{AppState, error};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// How long a health probe's result answers `/healthz`: at most one probe (one write) per
/// this, however often it is asked.
pub const HEALTH_PROBE_EVERY: Duration = Duration::from_secs(1);

/// The last health probe: when, and why the database could not be written (none: it could).
#[derive(Debug, Default)]
pub struct HealthProbe(tokio::sync::Mutex<Option<(tokio::time::Instant, Option<String>)>>);

/// 200 when a write can be committed; 503 when not. The probe (a write) runs at most once per
/// [`HEALTH_PROBE_EVERY`], shared by every request meanwhile. Why it failed is told to a
/// request that carries the API's token (and logged); others get no detail of the database.
pub(super) async fn healthz(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let failed = {
        let mut last = state.health.0.lock().await;
        match &*last {
            Some((at, failed)) if at.elapsed() < HEALTH_PROBE_EVERY => failed.clone(),
            _ => {
                let failed = match state.service.healthy().await {
                    Ok(()) => None,
                    Err(e) => Some(format!("{e:#}")),
                };
                if let Some(why) = &failed {
                    tracing::warn!(error = %why, "healthz: a write cannot be committed");
                }
                *last = Some((tokio::time::Instant::now(), failed.clone()));
                failed
            }
        }
    };
    let Some(why) = failed else {
        return Json(json!({ "status": "ok", "zones": state.service.zones().len() }))
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
