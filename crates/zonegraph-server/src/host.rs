//! The host-game hook (`serve --host-hook URL`): a host game that owns character sheets and
//! decides encounters, asked over HTTP.
//!
//! `POST {URL}/character` `{"user"}` → `{"level", "scores": {"str", …}, "keys": […]}`;
//! `POST {URL}/encounter` `{"user", "run_token", "zone_id", "tier", "room", "character"}` →
//! `{"outcome": "won"|"lost"|"fled", "message"?, "keys"?}`. Both with
//! `Authorization: Bearer $ZONEGRAPH_HOST_HOOK_TOKEN` when that is set. The core decides
//! when a decision is needed and applies it ([`zonegraph_core::bot::Game::Host`]); this
//! module only carries the question and the answer. Plain `http://` (a host game runs next
//! to the bot), a blocking client: commands run on blocking threads already.

use std::io::{BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use zonegraph_core::Ability;
use zonegraph_core::engine::{Character, EncounterRequest, HostOutcome};

/// How long a call to the host may take, connecting included.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(2);

/// Largest answer read from the host.
const MAX_BODY: usize = 64 * 1024;

/// Where the host game listens.
#[derive(Clone)]
pub struct HostHook {
    /// `host:port`, for the connection and the `Host` header.
    authority: String,
    /// The URL's path, without a trailing slash (`""` for the root).
    base_path: String,
    token: Option<String>,
    pub timeout: Duration,
}

impl std::fmt::Debug for HostHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostHook")
            .field("authority", &self.authority)
            .field("base_path", &self.base_path)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HostHook {
    /// A hook at `url` (`http://host:port/path`), with the bearer token to send, if any.
    pub fn new(url: &str, token: Option<String>) -> Result<HostHook> {
        let rest = url
            .trim()
            .strip_prefix("http://")
            .with_context(|| format!("--host-hook {url:?} must be an http:// URL"))?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.is_empty() {
            bail!("--host-hook {url:?} names no host");
        }
        let authority = if authority.contains(':') {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        Ok(HostHook {
            authority,
            base_path: format!("/{}", path.trim_end_matches('/'))
                .trim_end_matches('/')
                .to_string(),
            token: token.filter(|t| !t.trim().is_empty()),
            timeout: HOOK_TIMEOUT,
        })
    }

    /// The host's sheet of `user`.
    pub fn character(&self, user: &str) -> Result<Character> {
        let sheet: HostCharacter = self.post("/character", &serde_json::json!({ "user": user }))?;
        Ok(sheet.into_character())
    }

    /// The host's decision of the encounter `request` of `user`'s run `run_token`.
    pub fn encounter(
        &self,
        user: &str,
        run_token: &str,
        request: &EncounterRequest,
    ) -> Result<HostOutcome> {
        #[derive(Serialize)]
        struct Body<'a> {
            user: &'a str,
            run_token: &'a str,
            #[serde(flatten)]
            request: &'a EncounterRequest,
        }
        self.post(
            "/encounter",
            &Body {
                user,
                run_token,
                request,
            },
        )
    }

    /// `POST {base}{path}` with a JSON body; the JSON answer of a 2xx response.
    fn post<T: for<'de> Deserialize<'de>>(&self, path: &str, body: &impl Serialize) -> Result<T> {
        let deadline = Instant::now() + self.timeout;
        let left = || {
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .context("the host game did not answer in time")
        };
        let body = serde_json::to_vec(body)?;
        let addrs: Vec<_> = self
            .authority
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve {}", self.authority))?
            .collect();
        let mut stream = None;
        for a in &addrs {
            if let Ok(s) = TcpStream::connect_timeout(a, left()?) {
                stream = Some(s);
                break;
            }
        }
        let mut stream = stream.with_context(|| format!("cannot connect to {}", self.authority))?;
        stream.set_write_timeout(Some(left()?))?;
        stream.set_read_timeout(Some(left()?))?;
        let mut head = format!(
            "POST {}{path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n",
            self.base_path,
            self.authority,
            body.len()
        );
        if let Some(t) = &self.token {
            head.push_str(&format!("authorization: Bearer {t}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(&body)?;
        stream.flush()?;
        let response = crate::client::read_response(&mut BufReader::new(stream))
            .context("no answer from the host game")?;
        left()?;
        if !(200..300).contains(&response.status) {
            bail!("the host game answered {}", response.status);
        }
        if response.body.len() > MAX_BODY {
            bail!("the host game's answer is over {MAX_BODY} bytes");
        }
        serde_json::from_slice(&response.body).context("the host game's answer is not valid")
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

impl HostCharacter {
    fn into_character(self) -> Character {
        let mut c = Character {
            level: self.level,
            ..Character::default()
        };
        for (a, v) in self.scores {
            c.set_score(a, v);
        }
        for k in &self.keys {
            c.add_key(k);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_authority_and_path() {
        let h = HostHook::new("http://127.0.0.1:9/game/", None).expect("url");
        assert_eq!(
            (h.authority.as_str(), h.base_path.as_str()),
            ("127.0.0.1:9", "/game")
        );
        let h = HostHook::new("http://localhost", Some(" ".into())).expect("url");
        assert_eq!(
            (h.authority.as_str(), h.base_path.as_str()),
            ("localhost:80", "")
        );
        assert!(h.token.is_none());
        assert!(HostHook::new("https://x", None).is_err());
        assert!(HostHook::new("http:///x", None).is_err());
    }
}
