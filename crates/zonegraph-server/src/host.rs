//! The host-game hook (`serve --host-hook URL`): a host game that owns character sheets and
//! decides encounters, asked over HTTP.
//!
//! `POST {URL}/character` `{"user"}` → `{"level", "scores": {"str", …}, "keys": […]}`;
//! `POST {URL}/encounter` `{"user", "run_token", "zone_id", "tier", "room", "character"}` →
//! `{"outcome": "won"|"lost"|"fled", "message"?, "keys"?}`. Both with
//! `Authorization: Bearer $ZONEGRAPH_HOST_HOOK_TOKEN` when that is set. The core decides
//! when a decision is needed and applies it ([`zonegraph_core::bot::Game::Host`]); this
//! module only carries the question and the answer.
//!
//! The host is not trusted to be quick or well-behaved: each call has one deadline for all of
//! it (name resolution, connecting, the headers and the body together), the body is read up
//! to [`MAX_BODY`] and no further (a larger announced length is refused before anything is
//! read), a sheet out of the rules' range is refused, and after [`TRIP_AFTER`] failures of
//! the host in a row it is left alone for [`PAUSE`]: meanwhile every call fails at once, so
//! commands answer "the game master is busy" instead of each waiting for a host that is down.
//! Only the host's own failures count toward that pause, which every player shares (see
//! [`HostError`]): one player's refused call fails that player's command alone. `http://`
//! and `https://` (the system's roots) URLs; the client is reqwest's blocking one, as commands
//! run on blocking threads already.

use std::io::Read as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use zonegraph_core::engine::{Character, EncounterRequest, HostOutcome};
use zonegraph_core::zone::normalize_key;
use zonegraph_core::{Ability, rules};

use crate::secret::Secret;

/// How long a call to the host may take, all of it.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(2);

/// Largest answer read from the host.
pub const MAX_BODY: usize = 64 * 1024;

/// Failures in a row after which the host is left alone for [`PAUSE`].
pub const TRIP_AFTER: u32 = 3;

/// How long the host is left alone after [`TRIP_AFTER`] failures in a row.
pub const PAUSE: Duration = Duration::from_secs(30);

/// Why a call to the host game failed.
#[derive(Debug)]
pub enum HostError {
    /// The host is unwell: unreachable, too slow, a 5xx, an answer too large or not one at
    /// all. Counts toward the pause every player shares.
    Unwell(anyhow::Error),
    /// The host refused this one call: a 4xx (a player it does not know), or a sheet out of
    /// the rules' range. That player's command fails alone; the host is not paused.
    Refused(anyhow::Error),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::Unwell(e) | HostError::Refused(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for HostError {}

/// Where the host game listens.
#[derive(Clone, Debug)]
pub struct HostHook {
    /// The URL, without a trailing slash.
    base: String,
    token: Option<Secret>,
    pub timeout: Duration,
    client: reqwest::blocking::Client,
    breaker: Arc<Mutex<Breaker>>,
}

/// Failures in a row, and until when the host is left alone.
#[derive(Debug, Default)]
struct Breaker {
    failures: u32,
    open_until: Option<Instant>,
}

impl HostHook {
    /// A hook at `url` (`http://host:port/path` or `https://…`), with the bearer token to
    /// send, if any.
    pub fn new(url: &str, token: Option<Secret>) -> Result<HostHook> {
        let url = url.trim();
        let parsed = reqwest::Url::parse(url)
            .with_context(|| format!("--host-hook {url:?} is not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--host-hook {url:?} must be an http:// or https:// URL");
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            bail!("--host-hook {url:?} names no host");
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            bail!(
                "--host-hook: give the hook's secret as ZONEGRAPH_HOST_HOOK_TOKEN, not in the URL"
            );
        }
        let client = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .context("cannot make the host hook's HTTP client")?;
        Ok(HostHook {
            base: url.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.expose().trim().is_empty()),
            timeout: HOOK_TIMEOUT,
            client,
            breaker: Arc::default(),
        })
    }

    /// The host's sheet of `user`, refused when it is out of the rules' range.
    pub fn character(&self, user: &str) -> Result<Character, HostError> {
        let sheet: HostCharacter = self.call("character", &serde_json::json!({ "user": user }))?;
        sheet.into_character().map_err(|why| {
            HostError::Refused(anyhow::anyhow!(
                "the host game's sheet of {user} is refused: {why}"
            ))
        })
    }

    /// The host's decision of the encounter `request` of `user`'s run `run_token`.
    pub fn encounter(
        &self,
        user: &str,
        run_token: &str,
        request: &EncounterRequest,
    ) -> Result<HostOutcome, HostError> {
        #[derive(Serialize)]
        struct Body<'a> {
            user: &'a str,
            run_token: &'a str,
            #[serde(flatten)]
            request: &'a EncounterRequest,
        }
        self.call(
            "encounter",
            &Body {
                user,
                run_token,
                request,
            },
        )
    }

    /// [`HostHook::post`] to `/{kind}` behind the breaker, counted in the metrics by `kind`
    /// and outcome.
    fn call<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &'static str,
        body: &impl Serialize,
    ) -> Result<T, HostError> {
        if self.is_paused() {
            crate::metrics::host_call(kind, "paused");
            return Err(HostError::Unwell(anyhow::anyhow!(
                "the host game failed {TRIP_AFTER} times in a row; it is left alone for {} s",
                PAUSE.as_secs()
            )));
        }
        match self.post(&format!("/{kind}"), body) {
            Ok(v) => {
                crate::metrics::host_call(kind, "ok");
                *self.breaker.lock().unwrap_or_else(|p| p.into_inner()) = Breaker::default();
                Ok(v)
            }
            Err(e) => {
                match e {
                    HostError::Unwell(_) => {
                        crate::metrics::host_call(kind, "unwell");
                        self.failed();
                    }
                    HostError::Refused(_) => crate::metrics::host_call(kind, "refused"),
                }
                Err(e)
            }
        }
    }

    /// Whether the host is being left alone now (after [`TRIP_AFTER`] failures in a row).
    pub fn is_paused(&self) -> bool {
        let b = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        b.open_until.is_some_and(|until| Instant::now() < until)
    }

    /// Counts a failure; the [`TRIP_AFTER`]th in a row opens the breaker.
    fn failed(&self) {
        let mut b = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        b.failures += 1;
        if b.failures >= TRIP_AFTER {
            crate::metrics::host_paused();
            b.open_until = Some(Instant::now() + PAUSE);
            b.failures = 0;
        }
    }

    /// `POST {base}{path}` with a JSON body; the JSON answer of a 2xx response, all of it
    /// within the deadline.
    fn post<T: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, HostError> {
        let status = std::cell::Cell::new(None);
        self.post_inner(path, body, &status)
            .map_err(|e| match status.get() {
                Some(s) if (400..500).contains(&s) => HostError::Refused(e),
                _ => HostError::Unwell(e),
            })
    }

    /// [`HostHook::post`]'s work; `status` is the answer's status once one came.
    fn post_inner<T: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        body: &impl Serialize,
        status_of: &std::cell::Cell<Option<u16>>,
    ) -> Result<T> {
        let deadline = Instant::now() + self.timeout;
        let url = format!("{}{path}", self.base);
        let mut request = self
            .client
            .post(&url)
            .timeout(self.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body)?);
        if let Some(t) = &self.token {
            request = request.bearer_auth(t.expose());
        }
        let response = request.send().map_err(|e| {
            if e.is_timeout() {
                anyhow::anyhow!("the host game did not answer in time")
            } else {
                anyhow::Error::new(e).context("no answer from the host game")
            }
        })?;
        let status = response.status();
        status_of.set(Some(status.as_u16()));
        if !status.is_success() {
            bail!("the host game answered {}", status.as_u16());
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY as u64)
        {
            bail!("the host game's answer is over {MAX_BODY} bytes");
        }
        // The client's timeout covers reading the body too; the cap is read, not trusted.
        let mut body = Vec::new();
        response
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| {
                if Instant::now() >= deadline {
                    anyhow::anyhow!("the host game did not answer in time")
                } else {
                    anyhow::Error::new(e).context("the host game's answer broke off")
                }
            })?;
        if body.len() > MAX_BODY {
            bail!("the host game's answer is over {MAX_BODY} bytes");
        }
        serde_json::from_slice(&body).context("the host game's answer is not valid")
    }
}

/// A sheet as the host sends it: `{"level", "scores": {"str", …}, "keys": […]}` (a missing
/// score is 10, missing keys none; other fields are ignored).
#[derive(Debug, Deserialize)]
struct HostCharacter {
    level: u32,
    #[serde(default)]
    scores: std::collections::BTreeMap<Ability, i32>,
    #[serde(default)]
    keys: Vec<String>,
}

/// The range a host's level must be in (the rules' levels).
const LEVELS: std::ops::RangeInclusive<u32> = rules::LEVEL_RANGE;

/// The range a host's ability score must be in.
const SCORES: std::ops::RangeInclusive<i32> = rules::SCORE_RANGE;

impl HostCharacter {
    /// The sheet as a character, or why it is out of range.
    fn into_character(self) -> Result<Character, String> {
        if !LEVELS.contains(&self.level) {
            return Err(format!(
                "level {} is not in {}-{}",
                self.level,
                LEVELS.start(),
                LEVELS.end()
            ));
        }
        let mut c = Character {
            level: self.level,
            ..Character::default()
        };
        for (a, v) in self.scores {
            if !SCORES.contains(&v) {
                return Err(format!(
                    "{} {v} is not in {}-{}",
                    a.as_str().to_ascii_uppercase(),
                    SCORES.start(),
                    SCORES.end()
                ));
            }
            c.set_score(a, v);
        }
        // Every key the host holds, or the sheet is refused: the rules keep at most
        // `MAX_KEYS` keys of at most `MAX_KEY_BYTES`, and a key they would drop is refused
        // here rather than lost without a word.
        for k in &self.keys {
            if !c.add_key(k) && !c.keys.contains(&normalize_key(k)) {
                return Err(format!(
                    "key {:?} is refused: a sheet holds at most {} keys of 1 to {} bytes",
                    k.chars().take(80).collect::<String>(),
                    rules::MAX_KEYS,
                    rules::MAX_KEY_BYTES
                ));
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_http_or_https_with_a_host_and_no_secret() {
        let h = HostHook::new("http://127.0.0.1:9/game/", None).expect("url");
        assert_eq!(h.base, "http://127.0.0.1:9/game");
        let h = HostHook::new("https://host.example", Some(" ".into())).expect("url");
        assert!(h.token.is_none());
        for bad in ["ftp://x", "http://", "no url", "http://u:secret@x/"] {
            assert!(HostHook::new(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn sheets_out_of_range_are_refused() {
        let sheet = |level, str_score| HostCharacter {
            level,
            scores: [(Ability::Str, str_score)].into_iter().collect(),
            keys: Vec::new(),
        };
        assert!(sheet(3, 12).into_character().is_ok());
        assert_eq!(
            sheet(0, 12).into_character().expect_err("level 0"),
            "level 0 is not in 1-20"
        );
        assert_eq!(
            sheet(3, 1000).into_character().expect_err("STR 1000"),
            "STR 1000 is not in 1-30"
        );
    }
}
