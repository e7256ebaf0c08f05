//! Events out (`serve --events-url URL`): every event of every committed command (entered,
//! moved, a fork offered, a key granted, loot, XP and levels, the run's end; the core's
//! typed [`zonegraph_core::engine::Event`]) is sent to a host game as a signed `POST`, so
//! keys, loot and XP reach its inventory.
//!
//! The promise: **at least once, in order per player**. Events are queued in the command's
//! own transaction (`db::events`), so none is lost and none is sent for a change that was
//! not kept; a player's next event is not sent before the previous one was taken (a `2xx`);
//! a failure is tried again after 1 s, 2 s, 4 s … up to [`MAX_BACKOFF`], for as long as it
//! takes. The same event can arrive twice (a reply lost on the way back): its `id` says so.
//!
//! Each request: `Content-Type: application/json`, `X-Zonegraph-Event-Id: <id>`, and
//! `X-Zonegraph-Signature: t=<unix ms>,v1=<hex>`, where `v1` is HMAC-SHA256 with the shared
//! secret (`ZONEGRAPH_EVENTS_SECRET`) of `<t>.<body>`, the body's exact bytes. The body:
//! `{"id", "user", "zone_id", "run_token", "at_ms", "event": {"event": "key_granted", …}}`.
//!
//! The receiver is not trusted to be quick or well-behaved: one deadline per request
//! ([`SEND_TIMEOUT`]), no redirect followed, its answer's body never read; a slow or failing
//! receiver delays only the events, never a command (they are sent from a task of their own).

use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use hmac::{Hmac, Mac as _};
use serde::Serialize;
use sha2::Sha256;

use crate::clock::now_ms;
use crate::db::OutEvent;
use crate::secret::Secret;
use crate::store::Store;

/// How long one delivery may take, all of it.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest wait between two tries of one event.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// How many players' events are sent at once.
const PARALLEL: usize = 8;

/// How many events one round claims.
const ROUND: i64 = 64;

/// Where events go, and the secret they are signed with.
#[derive(Clone, Debug)]
pub struct EventsOut {
    url: String,
    secret: Secret,
    client: reqwest::blocking::Client,
}

/// The body of one delivery.
#[derive(Serialize)]
struct Body<'a> {
    /// The event's id: increasing per player in the order the events happened; the same id
    /// twice is the same event delivered again.
    id: i64,
    user: &'a str,
    zone_id: &'a str,
    run_token: &'a str,
    at_ms: i64,
    event: &'a serde_json::value::RawValue,
}

/// How one round of deliveries went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub delivered: usize,
    pub failed: usize,
    /// Why the first failed delivery of the round failed.
    pub why: Option<String>,
}

impl EventsOut {
    /// Events to `url` (`http://` or `https://`), signed with `secret` (at least 16 bytes).
    pub fn new(url: &str, secret: &str) -> Result<EventsOut> {
        let url = url.trim();
        let parsed = reqwest::Url::parse(url)
            .with_context(|| format!("--events-url {url:?} is not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--events-url {url:?} must be an http:// or https:// URL");
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            bail!("--events-url {url:?} names no host");
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            bail!("--events-url: the receiver checks the signature; put no password in the URL");
        }
        let secret = secret.trim();
        if secret.len() < 16 {
            bail!(
                "--events-url needs a shared secret of at least 16 characters in \
                 ZONEGRAPH_EVENTS_SECRET: the host game checks each event's signature with it"
            );
        }
        let client = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(SEND_TIMEOUT)
            .connect_timeout(SEND_TIMEOUT)
            .build()
            .context("cannot make the events' HTTP client")?;
        Ok(EventsOut {
            url: url.to_string(),
            secret: Secret::new(secret),
            client,
        })
    }

    /// Where events go.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends the events due now, each player's oldest first, [`PARALLEL`] at a time, and
    /// records each outcome.
    pub fn deliver_due(&self, store: &Store) -> Result<Round> {
        let due = store.claim_due_events(ROUND)?;
        let mut round = Round::default();
        for chunk in due.chunks(PARALLEL) {
            let outcomes: Vec<(i64, i64, Result<(), String>)> = std::thread::scope(|s| {
                let sending: Vec<_> = chunk
                    .iter()
                    .map(|e| (e.id, e.attempts, s.spawn(|| self.send(e))))
                    .collect();
                sending
                    .into_iter()
                    .map(|(id, attempts, h)| {
                        let r = h
                            .join()
                            .unwrap_or_else(|_| Err("the sender panicked".to_string()));
                        (id, attempts, r)
                    })
                    .collect()
            });
            for (id, attempts, outcome) in outcomes {
                match outcome {
                    Ok(()) => {
                        round.delivered += 1;
                        store.event_sent(id, Ok(()))?;
                    }
                    Err(why) => {
                        round.failed += 1;
                        round.why.get_or_insert_with(|| why.clone());
                        let retry_at = now_ms() + backoff(attempts);
                        store.event_sent(id, Err((retry_at, why)))?;
                    }
                }
            }
        }
        Ok(round)
    }

    /// One delivery: `Ok` on a `2xx`, else what went wrong.
    fn send(&self, e: &OutEvent) -> Result<(), String> {
        let event = serde_json::value::RawValue::from_string(e.event_json.clone())
            .map_err(|err| format!("stored event {} is not JSON: {err}", e.id))?;
        let body = serde_json::to_vec(&Body {
            id: e.id,
            user: &e.user,
            zone_id: &e.zone_id,
            run_token: &e.run_token,
            at_ms: e.created_at_ms,
            event: &event,
        })
        .map_err(|err| err.to_string())?;
        let t = now_ms();
        let signature = format!(
            "t={t},v1={}",
            sign(self.secret.expose().as_bytes(), t, &body)
        );
        let answer = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("x-zonegraph-event-id", e.id.to_string())
            .header("x-zonegraph-signature", signature)
            .body(body)
            .send()
            .map_err(|err| without_url(&err))?;
        let status = answer.status();
        // The answer's body is never read: dropping it closes the connection.
        drop(answer);
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the receiver answered {status}"))
        }
    }
}

/// HMAC-SHA256 of `<t>.<body>` with `secret`, lowercase hex.
pub fn sign(secret: &[u8], t: i64, body: &[u8]) -> String {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How long to wait after `attempts` failures: 1 s doubled each time, at most [`MAX_BACKOFF`].
pub fn backoff(attempts: i64) -> i64 {
    let max = i64::try_from(MAX_BACKOFF.as_millis()).unwrap_or(i64::MAX);
    let shift = u32::try_from(attempts.clamp(0, 20)).unwrap_or(20);
    (1000_i64 << shift).min(max)
}

/// reqwest's error without the URL it names (it is in the server's start message already).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_redirect() {
        "redirected"
    } else {
        "failed"
    };
    let mut s = format!("the request {kind}");
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against Python's `hmac.new(secret, b"<t>.<body>", hashlib.sha256).hexdigest()`.
    #[test]
    fn the_signature_is_hmac_sha256_of_the_time_a_dot_and_the_body() {
        assert_eq!(
            sign(
                b"0123456789abcdef-secret",
                1_700_000_000_000,
                br#"{"id":1}"#
            ),
            "37eff88f36796a835186976630f7f948d1ba614f786e50cffc4dc65da95fc256"
        );
    }

    #[test]
    fn backoff_doubles_from_a_second_to_five_minutes() {
        assert_eq!(
            (0..12).map(backoff).collect::<Vec<_>>(),
            [
                1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 300000, 300000, 300000
            ]
        );
        assert_eq!(backoff(-3), 1000);
        assert_eq!(backoff(i64::MAX), 300_000);
    }

    #[test]
    fn a_secret_is_needed_and_the_url_is_checked() {
        let refused = |url: &str, secret: &str| {
            EventsOut::new(url, secret)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(refused("http://127.0.0.1:9/e", "short").contains("at least 16"));
        assert!(refused("ftp://h/e", "0123456789abcdef").contains("http://"));
        assert!(refused("not a url", "0123456789abcdef").contains("not a URL"));
        assert!(refused("http://u:p@h/e", "0123456789abcdef").contains("no password"));
        assert!(EventsOut::new("https://game.example/events", "0123456789abcdef").is_ok());
    }
}
