//! Who may do what through the HTTP API: the one owner of that decision.
//!
//! The operator's token (`--api-token`, `ZONEGRAPH_API_TOKEN` or `<db>.api-token`) may do
//! everything, as `--no-auth` does for this machine. Besides it, `zonegraph token new` makes
//! scoped tokens, kept in the database (so every instance knows them) as their SHA-256 only:
//!
//! - `admin`: everything the operator's token does, but named and revocable;
//! - `publish`: publishes zones and reads them (the list, a zone's file, its versions);
//!   never acts as a player and never withdraws;
//! - `transport:PREFIX`: acts as the users whose id starts with `PREFIX` (`discord:`), and
//!   never as an `--admin` user; reads the zones;
//! - `metrics`: reads `/metrics` (a Prometheus server's token), and nothing else: it sees
//!   counts, never a zone, a player or a run.
//!
//! A token looks like `zgt_<id>_<secret>`: the id names it in lists and logs, the secret is
//! 128 random bits. Instances load the tokens from the database every
//! [`REFRESH_EVERY`] (a revocation is in force within that), and at once when a token of
//! this shape is not known yet (at most every [`MISS_REFRESH`]; in between, that one token
//! is looked up by its hash), so a new token works on its first use.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use sha2::{Digest as _, Sha256};

use crate::db::TokenRow;

/// How every scoped token begins.
pub const TOKEN_PREFIX: &str = "zgt_";
/// How often an instance reads the tokens again (and so how long a revoked token may still
/// be taken by an instance that had it).
pub const REFRESH_EVERY: Duration = Duration::from_secs(2);
/// How often a token not known yet may make an instance read the tokens at once.
pub const MISS_REFRESH: Duration = Duration::from_secs(1);
/// Longest transport prefix accepted.
pub const MAX_PREFIX_LEN: usize = 64;

/// What a scoped token may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Admin,
    Publish,
    /// Reads the metrics only.
    Metrics,
    /// Acts as the users whose id starts with `prefix` (never an `--admin` one).
    Transport {
        prefix: String,
    },
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Admin => f.write_str("admin"),
            Scope::Publish => f.write_str("publish"),
            Scope::Metrics => f.write_str("metrics"),
            Scope::Transport { prefix } => write!(f, "transport:{prefix}"),
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Scope, String> {
        match s {
            "admin" => return Ok(Scope::Admin),
            "publish" => return Ok(Scope::Publish),
            "metrics" => return Ok(Scope::Metrics),
            _ => {}
        }
        let Some(prefix) = s.strip_prefix("transport:") else {
            return Err(format!(
                "unknown scope {s:?}: use publish, admin, metrics or transport:PREFIX \
                 (transport:discord:)"
            ));
        };
        if prefix.trim().is_empty() {
            return Err(
                "a transport scope needs the prefix of the user ids it acts as: \
                 transport:discord: (an empty prefix would be every user; use admin for that)"
                    .into(),
            );
        }
        if prefix.len() > MAX_PREFIX_LEN || prefix.chars().any(char::is_control) {
            return Err(format!(
                "the transport prefix must be at most {MAX_PREFIX_LEN} bytes without control \
                 characters"
            ));
        }
        Ok(Scope::Transport {
            prefix: prefix.to_string(),
        })
    }
}

/// A scoped token as an instance knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub token_id: String,
    pub scope: Scope,
    pub label: String,
    pub revoked_at_ms: Option<i64>,
}

/// Who sent a request that passed the token check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The operator's token, or `--no-auth` on this machine.
    Operator,
    Scoped(Grant),
}

/// What a request asks to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need<'a> {
    /// List the zones, read a zone's file or its versions.
    ReadZones,
    Publish,
    Withdraw,
    /// Read what players do in a zone (play insight): counts only, for designers.
    ReadInsight,
    /// Send a command, read or acknowledge notices as this user.
    ActAs(&'a str),
    /// Read the Prometheus metrics (`/metrics`).
    ReadMetrics,
}

impl Caller {
    /// Whether this caller may do `need`; the error says why not, in words for the caller.
    /// `admins` are the `--admin` users (a transport token never acts as one).
    pub fn may(&self, need: Need<'_>, admins: &BTreeSet<String>) -> Result<(), String> {
        let grant = match self {
            Caller::Operator => return Ok(()),
            Caller::Scoped(g) => g,
        };
        let refused = |what: &str| {
            Err(format!(
                "token {} ({}) may not {what}; nothing was changed",
                grant.token_id, grant.scope
            ))
        };
        match (&grant.scope, need) {
            (Scope::Metrics, Need::ReadMetrics) => Ok(()),
            (Scope::Metrics, _) => refused("do that: a metrics token reads /metrics only"),
            (Scope::Admin, _) | (_, Need::ReadZones) => Ok(()),
            (Scope::Publish | Scope::Transport { .. }, Need::ReadMetrics) => refused(
                "read the metrics: a metrics token (a Prometheus server's) or an admin token may",
            ),
            (Scope::Publish, Need::Publish | Need::ReadInsight) => Ok(()),
            (Scope::Publish, Need::Withdraw) => {
                refused("withdraw a zone (an admin token or the operator's may)")
            }
            (Scope::Publish, Need::ActAs(_)) => {
                refused("act as a player: a publish token publishes and lists zones only")
            }
            (Scope::Transport { .. }, Need::Publish | Need::Withdraw) => {
                refused("publish or withdraw zones: a transport token acts as players only")
            }
            (Scope::Transport { .. }, Need::ReadInsight) => {
                refused("read play insight: a publish token (a designer's) or an admin token may")
            }
            (Scope::Transport { prefix }, Need::ActAs(user)) => {
                if !user.starts_with(prefix.as_str()) {
                    refused(&format!(
                        "act as {user:?}: it acts only as users whose id starts with {prefix:?}"
                    ))
                } else if admins.contains(user) {
                    refused(&format!(
                        "act as {user:?}, an admin of this server: transport tokens never do"
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Whether `s` has a scoped token's shape, `zgt_` + 8 + `_` + 32 lowercase hex digits: only
/// such a token can be one, and only such a one may make an instance read the tokens.
pub fn has_token_shape(s: &str) -> bool {
    let hex = |t: &str, n: usize| {
        t.len() == n
            && t.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    s.strip_prefix(TOKEN_PREFIX)
        .and_then(|rest| rest.split_once('_'))
        .is_some_and(|(id, secret)| hex(id, 8) && hex(secret, 32))
}

/// SHA-256 of `token`, lowercase hex.
pub fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new token of `scope`: the token (to show once) and the record to keep.
pub fn make(scope: &Scope, label: &str, now: i64) -> Result<(String, TokenRow)> {
    if label.len() > 200 || label.chars().any(char::is_control) {
        bail!("the label must be at most 200 bytes without control characters");
    }
    let id = crate::db::random_hex()?[..8].to_string();
    let token = format!("{TOKEN_PREFIX}{id}_{}", crate::db::random_hex()?);
    let row = TokenRow {
        token_id: id,
        token_sha256: sha256_hex(&token),
        scope: scope.to_string(),
        label: label.to_string(),
        created_at_ms: now,
        revoked_at_ms: None,
    };
    Ok((token, row))
}

/// The scoped tokens an instance knows, by hash, and when it last read them.
#[derive(Default)]
pub struct TokenBook {
    by_hash: RwLock<HashMap<String, Grant>>,
    read_at: Mutex<Option<Instant>>,
    /// When a token not known last made this instance read the tokens.
    missed_at: Mutex<Option<Instant>>,
    /// The tokens whose scope was said to be unreadable (said once, not at every read).
    told: Mutex<BTreeSet<String>>,
}

impl fmt::Debug for TokenBook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.by_hash.read().map_or(0, |m| m.len());
        write!(f, "TokenBook({n} tokens)")
    }
}

impl TokenBook {
    /// Replaces what is known with `rows`. A row whose scope this build cannot read is left
    /// out, and said in the returned words (once per token, not at every read).
    pub fn load(&self, rows: &[TokenRow]) -> Vec<String> {
        let mut words = Vec::new();
        let mut map = HashMap::with_capacity(rows.len());
        for r in rows {
            match r.scope.parse::<Scope>() {
                Ok(scope) => {
                    map.insert(
                        r.token_sha256.clone(),
                        Grant {
                            token_id: r.token_id.clone(),
                            scope,
                            label: r.label.clone(),
                            revoked_at_ms: r.revoked_at_ms,
                        },
                    );
                }
                Err(why) => {
                    let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
                    if told.insert(r.token_id.clone()) {
                        words.push(format!("token zgt_{} is not used: {why}", r.token_id));
                    }
                }
            }
        }
        *self.by_hash.write().unwrap_or_else(|p| p.into_inner()) = map;
        *self.read_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        words
    }

    /// The grant of `token`, if it is one of the tokens known.
    pub fn find(&self, token: &str) -> Option<Grant> {
        if !has_token_shape(token) {
            return None;
        }
        self.by_hash
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&sha256_hex(token))
            .cloned()
    }

    /// Whether the tokens were last read longer than `every` ago (or never), and if so
    /// marks them as being read now (so that callers at once do not all read).
    pub fn due(&self, every: Duration) -> bool {
        take_turn(&self.read_at, every).is_ok()
    }

    /// For a token not known: `Ok` when this caller is to read the tokens now (the last such
    /// read was [`MISS_REFRESH`] ago or more; marked as now), else how long until the next
    /// may. Tokens that are not known cost the database at most one read of every token a
    /// second however many are sent; a miss in between looks up its one token by its hash.
    pub fn miss_turn(&self) -> Result<(), Duration> {
        take_turn(&self.missed_at, MISS_REFRESH)
    }

    /// Adds the one token `row` (found by its hash after a miss) to what is known; its grant,
    /// or `None` when this build cannot read its scope.
    pub fn add(&self, row: &TokenRow) -> Option<Grant> {
        let grant = Grant {
            token_id: row.token_id.clone(),
            scope: row.scope.parse::<Scope>().ok()?,
            label: row.label.clone(),
            revoked_at_ms: row.revoked_at_ms,
        };
        self.by_hash
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(row.token_sha256.clone(), grant.clone());
        Some(grant)
    }
}

/// `Ok` (and `at` set to now) when `at` is more than `every` ago or unset, else the wait.
fn take_turn(at: &Mutex<Option<Instant>>, every: Duration) -> Result<(), Duration> {
    let mut at = at.lock().unwrap_or_else(|p| p.into_inner());
    match *at {
        Some(t) if t.elapsed() < every => Err(every - t.elapsed()),
        _ => {
            *at = Some(Instant::now());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scoped(scope: &str) -> Caller {
        Caller::Scoped(Grant {
            token_id: "ab12cd34".into(),
            scope: scope.parse().expect("a scope"),
            label: String::new(),
            revoked_at_ms: None,
        })
    }

    #[test]
    fn scopes_read_back_as_written_and_bad_ones_say_why() {
        for s in [
            "admin",
            "publish",
            "metrics",
            "transport:discord:",
            "transport:@",
        ] {
            assert_eq!(s.parse::<Scope>().expect("a scope").to_string(), s);
        }
        for (bad, says) in [
            ("root", "unknown scope"),
            ("transport:", "needs the prefix"),
            ("transport: ", "needs the prefix"),
            ("Publish", "unknown scope"),
        ] {
            let e = bad.parse::<Scope>().expect_err("refused");
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn each_scope_does_what_it_says_and_nothing_else() {
        let admins: BTreeSet<String> = ["discord:boss".to_string()].into();
        let op = Caller::Operator;
        let admin = scoped("admin");
        let publish = scoped("publish");
        let discord = scoped("transport:discord:");
        let metrics = scoped("metrics");
        for c in [&op, &admin] {
            for need in [
                Need::ReadMetrics,
                Need::ReadZones,
                Need::Publish,
                Need::Withdraw,
                Need::ActAs("discord:boss"),
                Need::ActAs("@a:x"),
            ] {
                assert!(c.may(need, &admins).is_ok(), "{c:?} {need:?}");
            }
        }
        assert!(publish.may(Need::Publish, &admins).is_ok());
        assert!(publish.may(Need::ReadZones, &admins).is_ok());
        assert!(publish.may(Need::Withdraw, &admins).is_err());
        let e = publish
            .may(Need::ActAs("@a:x"), &admins)
            .expect_err("refused");
        assert!(
            e.contains("ab12cd34") && e.contains("nothing was changed"),
            "{e}"
        );
        assert!(discord.may(Need::ActAs("discord:42"), &admins).is_ok());
        assert!(discord.may(Need::ReadZones, &admins).is_ok());
        let e = discord
            .may(Need::ActAs("@a:x"), &admins)
            .expect_err("refused");
        assert!(e.contains("\"discord:\""), "{e}");
        let e = discord
            .may(Need::ActAs("discord:boss"), &admins)
            .expect_err("refused");
        assert!(e.contains("admin"), "{e}");
        // A prefix is a prefix of the id, not of some part of it.
        assert!(discord.may(Need::ActAs("x-discord:42"), &admins).is_err());
        assert!(discord.may(Need::Publish, &admins).is_err());
        assert!(discord.may(Need::Withdraw, &admins).is_err());
        // The metrics scope reads the metrics and nothing else; only it and admin read them.
        assert!(metrics.may(Need::ReadMetrics, &admins).is_ok());
        for need in [
            Need::ReadZones,
            Need::ReadInsight,
            Need::Publish,
            Need::Withdraw,
            Need::ActAs("@a:x"),
        ] {
            assert!(metrics.may(need, &admins).is_err(), "{need:?}");
        }
        for c in [&publish, &discord] {
            let e = c.may(Need::ReadMetrics, &admins).expect_err("refused");
            assert!(e.contains("metrics token"), "{e}");
        }
    }

    #[test]
    fn a_book_finds_a_token_by_its_hash_only() {
        let (token, row) = make(&Scope::Publish, "studio", 1).expect("made");
        assert!(token.starts_with("zgt_") && token.contains(&row.token_id));
        assert!(has_token_shape(&token), "{token}");
        for not in [
            "zgt_",
            "zgt_zzzzzzzz_",
            &token[..token.len() - 1],
            &format!("{token}0"),
        ] {
            assert!(!has_token_shape(not), "{not}");
        }
        assert_ne!(row.token_sha256, token);
        let book = TokenBook::default();
        assert!(book.find(&token).is_none());
        let mut unreadable = row.clone();
        unreadable.token_id = "ffffffff".into();
        unreadable.token_sha256 = "0".repeat(64);
        unreadable.scope = "root".into();
        let words = book.load(&[row.clone(), unreadable.clone()]);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(
            book.load(&[row.clone(), unreadable]).is_empty(),
            "said once"
        );
        assert_eq!(book.find(&token).expect("a scope").scope, Scope::Publish);
        // One character off is not the token.
        let mut other = token.clone();
        other.pop();
        other.push(if token.ends_with('0') { '1' } else { '0' });
        assert!(book.find(&other).is_none());
        assert!(!book.due(Duration::from_secs(60)));
        assert!(book.due(Duration::ZERO));
        // A read for a miss is not held back by the last periodic read, only by the last
        // read for a miss.
        assert!(book.miss_turn().is_ok());
        let wait = book.miss_turn().expect_err("one a second");
        assert!(wait <= MISS_REFRESH, "{wait:?}");
    }
}
