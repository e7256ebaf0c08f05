//! Events out (`serve --events-url URL`): every event of every committed command (entered,
//! moved, a fork offered, a key granted, loot, XP and levels, the run's end; the core's
//! typed [`zonegraph_core::engine::Event`]) is sent to a host game as a signed `POST`, so
//! keys, loot and XP reach its inventory.
//!
//! The promise: **at least once, in order per player, within limits**. Events are queued in
//! the command's own transaction (`db::events`), so none is sent for a change that was not
//! kept; a player's next event is not sent before the previous one was taken (a `2xx`) or
//! given up; a failure is tried again after 1 s, 2 s, 4 s … up to [`MAX_BACKOFF`]. The same
//! event can arrive twice (a reply lost on the way back): its `id` says so.
//!
//! The outbox sheds ([`OutboxLimits`]): an event the receiver refuses (it answered, with a
//! status that is not "later": [`Failure::Refused`]) is given up at its `max_attempts`-th
//! failure, and any event still failing past `max_age` at its next; a player's queue and
//! the whole outbox past their caps give up their oldest. Given up is moved to the dead
//! letters (`zonegraph events dead` lists them), and the player's next event goes on. A
//! receiver that is down or says "later" ([`Failure::Unavailable`]) loses nothing younger
//! than `max_age`, and while it fails the rounds themselves slow down ([`round_wait`]).
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
use crate::db::{DeadCause, OutEvent, OutboxLimits, Sent, millis};
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

/// How long the sender waits between rounds that had nothing to send.
pub const ROUND_EVERY: Duration = Duration::from_millis(200);

/// The longest wait between two rounds while the receiver fails.
pub const MAX_ROUND_WAIT: Duration = Duration::from_secs(30);

/// Where events go, the secret they are signed with, and how much the outbox keeps.
#[derive(Clone, Debug)]
pub struct EventsOut {
    url: String,
    secret: Secret,
    client: reqwest::blocking::Client,
    limits: OutboxLimits,
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
    /// Failed deliveries the receiver refused ([`Failure::Refused`]).
    pub refused: usize,
    /// Failed deliveries the receiver could not take ([`Failure::Unavailable`]).
    pub unavailable: usize,
    /// Why the first failed delivery of the round failed.
    pub why: Option<String>,
}

impl Round {
    /// Failed deliveries, of either kind.
    pub fn failed(&self) -> usize {
        self.refused + self.unavailable
    }

    /// What the round says about the receiver.
    pub fn went(&self) -> Went {
        if self.delivered > 0 {
            Went::Delivered
        } else if self.unavailable > 0 {
            Went::Failing
        } else {
            Went::Idle
        }
    }
}

/// What a round says about the receiver, for the wait before the next ([`round_wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Went {
    /// It took an event: more may be due.
    Delivered,
    /// It took none and could not take one (or the outbox could not be read).
    Failing,
    /// Nothing was due, or it only refused events (it answers: it is up).
    Idle,
}

/// Why one delivery failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The receiver answered with a status that refuses this event: a `4xx` other than
    /// 401, 403, 404 (the address or the secret is wrong, not the event), 408 and 429
    /// ("later"). Trying again is not likely to help, so it counts toward `max_attempts`.
    Refused(String),
    /// No answer in time, no connection, a redirect, a `5xx` or one of the `4xx` above:
    /// the receiver's trouble, not the event's. Only `max_age` gives such an event up.
    Unavailable(String),
}

impl Failure {
    /// The failure an answer with `status` (not a `2xx`) is.
    pub fn of_status(status: reqwest::StatusCode) -> Failure {
        let why = format!("the receiver answered {status}");
        match status.as_u16() {
            401 | 403 | 404 | 408 | 429 => Failure::Unavailable(why),
            400..=499 => Failure::Refused(why),
            _ => Failure::Unavailable(why),
        }
    }

    /// What went wrong, in words.
    pub fn why(&self) -> &str {
        match self {
            Failure::Refused(why) | Failure::Unavailable(why) => why,
        }
    }
}

/// What becomes of event `e` whose delivery failed at `now`: given up (refused for the
/// `max_attempts`-th time, or failing past `max_age`), or tried again after [`backoff`].
pub fn after_failure(e: &OutEvent, failure: &Failure, limits: &OutboxLimits, now: i64) -> Sent {
    let error = failure.why().to_string();
    let attempts = e.attempts.saturating_add(1);
    if matches!(failure, Failure::Refused(_)) && attempts >= limits.max_attempts {
        Sent::Dead {
            cause: DeadCause::Refused,
            error,
        }
    } else if now.saturating_sub(e.created_at_ms) >= millis(limits.max_age) {
        Sent::Dead {
            cause: DeadCause::TooOld,
            error,
        }
    } else {
        Sent::Retry {
            at: now.saturating_add(backoff(e.attempts)),
            error,
        }
    }
}

/// How long the sender waits before its next round, having waited `last` before the round
/// that `went`: not at all after a delivery (more may be due); twice as long while the
/// receiver fails, from [`ROUND_EVERY`] up to [`MAX_ROUND_WAIT`]; else as long as before,
/// at least [`ROUND_EVERY`]: a round with nothing due says nothing of the receiver, so one
/// that failed keeps its slower pace until it takes an event.
pub fn round_wait(last: Duration, went: Went) -> Duration {
    match went {
        Went::Delivered => Duration::ZERO,
        Went::Failing => (last * 2).clamp(ROUND_EVERY, MAX_ROUND_WAIT),
        Went::Idle => last.clamp(ROUND_EVERY, MAX_ROUND_WAIT),
    }
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
            limits: OutboxLimits::default(),
        })
    }

    /// These events with the outbox kept within `limits` instead of the defaults.
    #[must_use]
    pub fn with_limits(self, limits: OutboxLimits) -> EventsOut {
        EventsOut { limits, ..self }
    }

    /// Where events go.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How much the outbox keeps.
    pub fn limits(&self) -> &OutboxLimits {
        &self.limits
    }

    /// Sends the events due now, each player's oldest first, [`PARALLEL`] at a time, and
    /// records each outcome ([`after_failure`] decides a failure's).
    pub fn deliver_due(&self, store: &Store) -> Result<Round> {
        let due = store.claim_due_events(ROUND)?;
        let mut round = Round::default();
        for chunk in due.chunks(PARALLEL) {
            let outcomes: Vec<(&OutEvent, Result<(), Failure>)> = std::thread::scope(|s| {
                let sending: Vec<_> = chunk
                    .iter()
                    .map(|e| (e, s.spawn(|| self.send(e))))
                    .collect();
                sending
                    .into_iter()
                    .map(|(e, h)| {
                        let r = h.join().unwrap_or_else(|_| {
                            Err(Failure::Unavailable("the sender panicked".to_string()))
                        });
                        (e, r)
                    })
                    .collect()
            });
            for (e, outcome) in outcomes {
                let sent = match outcome {
                    Ok(()) => {
                        round.delivered += 1;
                        Sent::Delivered
                    }
                    Err(failure) => {
                        match &failure {
                            Failure::Refused(_) => round.refused += 1,
                            Failure::Unavailable(_) => round.unavailable += 1,
                        }
                        round.why.get_or_insert_with(|| failure.why().to_string());
                        after_failure(e, &failure, &self.limits, now_ms())
                    }
                };
                store.event_sent(e.id, sent)?;
            }
        }
        Ok(round)
    }

    /// One delivery: `Ok` on a `2xx`, else what went wrong.
    fn send(&self, e: &OutEvent) -> Result<(), Failure> {
        // A stored event that is not JSON stays so: it is given up like a refused one.
        let event = serde_json::value::RawValue::from_string(e.event_json.clone())
            .map_err(|err| Failure::Refused(format!("stored event {} is not JSON: {err}", e.id)))?;
        let body = serde_json::to_vec(&Body {
            id: e.id,
            user: &e.user,
            zone_id: &e.zone_id,
            run_token: &e.run_token,
            at_ms: e.created_at_ms,
            event: &event,
        })
        .map_err(|err| Failure::Refused(err.to_string()))?;
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
            .map_err(|err| Failure::Unavailable(without_url(&err)))?;
        let status = answer.status();
        // The answer's body is never read: dropping it closes the connection.
        drop(answer);
        if status.is_success() {
            Ok(())
        } else {
            Err(Failure::of_status(status))
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
    fn the_rounds_slow_down_while_the_receiver_fails_and_go_at_once_after_a_delivery() {
        let mut wait = Duration::ZERO;
        let mut waits = Vec::new();
        for went in [
            Went::Idle,
            Went::Failing,
            Went::Failing,
            Went::Idle,
            Went::Failing,
            Went::Failing,
            Went::Failing,
            Went::Failing,
            Went::Failing,
            Went::Failing,
            Went::Failing,
            Went::Failing,
            Went::Delivered,
            Went::Idle,
        ] {
            wait = round_wait(wait, went);
            waits.push(wait.as_millis());
        }
        assert_eq!(
            waits,
            [
                200, 400, 800, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 0, 200
            ]
        );
        // Only a receiver that could not take an event slows the rounds, not a refusal.
        let refused = Round {
            refused: 2,
            ..Round::default()
        };
        assert_eq!(refused.went(), Went::Idle);
        let mixed = Round {
            delivered: 1,
            unavailable: 3,
            ..Round::default()
        };
        assert_eq!(mixed.went(), Went::Delivered);
    }

    #[test]
    fn a_failure_is_tried_again_until_refused_too_often_or_too_old() {
        let limits = OutboxLimits {
            max_attempts: 3,
            max_age: Duration::from_secs(60),
            ..OutboxLimits::default()
        };
        let event = |attempts, created_at_ms| OutEvent {
            id: 1,
            user: "@u:test".into(),
            zone_id: String::new(),
            run_token: String::new(),
            event_json: "{}".into(),
            created_at_ms,
            attempts,
        };
        let refused = Failure::of_status(reqwest::StatusCode::BAD_REQUEST);
        let down = Failure::of_status(reqwest::StatusCode::SERVICE_UNAVAILABLE);
        let check = |e: &OutEvent, f: &Failure, now: i64| match after_failure(e, f, &limits, now) {
            Sent::Retry { at, .. } => format!("retry at {at}"),
            Sent::Dead { cause, error } => format!("{cause}: {error}"),
            Sent::Delivered => "delivered".into(),
        };
        assert_eq!(check(&event(0, 0), &refused, 10), "retry at 1010");
        assert_eq!(check(&event(1, 0), &refused, 10), "retry at 2010");
        assert_eq!(
            check(&event(2, 0), &refused, 10),
            "refused: the receiver answered 400 Bad Request"
        );
        // A receiver that is down is waited for as long as the age allows.
        assert_eq!(check(&event(50, 0), &down, 10), "retry at 300010");
        assert_eq!(
            check(&event(50, 0), &down, 60_000),
            "too old: the receiver answered 503 Service Unavailable"
        );
        assert_eq!(
            check(&event(0, 0), &refused, 60_000).split(':').next(),
            Some("too old")
        );
    }

    #[test]
    fn a_status_that_blames_the_event_is_a_refusal_and_one_that_blames_the_receiver_is_not() {
        let refused: Vec<u16> = [
            400, 401, 403, 404, 408, 409, 410, 413, 422, 429, 500, 502, 503, 302,
        ]
        .into_iter()
        .filter(|s| {
            let status = reqwest::StatusCode::from_u16(*s).unwrap_or_default();
            matches!(Failure::of_status(status), Failure::Refused(_))
        })
        .collect();
        assert_eq!(refused, [400, 409, 410, 413, 422]);
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
