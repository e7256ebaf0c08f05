//! A server's configuration ([`ServerConfig`]): what `zonegraph serve`'s flags set, and what
//! tests build directly; how the API is protected ([`Auth`]) and the token file beside a
//! SQLite database.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use crate::http::Limits;
use crate::secret::Secret;
use crate::store::{self, CharacterRules, DbAt, GameSettings, RunIds};

#[derive(Clone, Debug)]
pub enum Auth {
    /// `--api-token` / `ZONEGRAPH_API_TOKEN`.
    Token(Secret),
    /// Neither: a random token kept in `<db>.api-token` (mode 0600), made at the first start
    /// and reused.
    TokenFile,
    /// `--no-auth`.
    Off,
}

/// `<db>.api-token`, next to the database.
pub fn token_file(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".api-token");
    PathBuf::from(s)
}

/// The token kept in `path`, made (128 random bits, mode 0600 from the first byte) when the
/// file does not exist yet.
pub fn read_or_make_token(path: &Path) -> Result<Secret> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if token.is_empty() {
                bail!(
                    "the API token file {} is empty; delete it to have a new token made",
                    path.display()
                );
            }
            return Ok(Secret::new(token));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read the API token {}", path.display()));
        }
    }
    let token = crate::db::random_hex()?;
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        open.mode(0o600);
    }
    let mut file = match open.open(path) {
        Ok(f) => f,
        // Another server made it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return read_or_make_token(path);
        }
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot create the API token {}", path.display()));
        }
    };
    use std::io::Write as _;
    writeln!(file, "{token}")
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write the API token {}", path.display()))?;
    Ok(Secret::new(token))
}

/// Everything a server needs; tests build one directly.
#[derive(Clone)]
pub struct ServerConfig {
    pub db: DbAt,
    pub zones: PathBuf,
    pub listen: SocketAddr,
    pub web: PathBuf,
    pub public_url: Option<String>,
    pub fork_timeout: Duration,
    pub auth: Auth,
    pub limits: Limits,
    /// How often the sweeper looks for timed-out forks.
    pub sweep_every: Duration,
    /// Run ids (they decide every roll); random unless a test injects its own.
    pub run_ids: RunIds,
    /// The users who may set anyone's sheet (`--admin`).
    pub admins: Vec<String>,
    /// Whether players edit their own sheets (`--sandbox`).
    pub characters: CharacterRules,
    /// The built-in rules' starting scores, or a host game (`--host-hook`).
    pub game: GameSettings,
    /// Whether to LISTEN for other instances' changes (PostgreSQL; `--no-listen` off).
    pub listen_db: bool,
    /// Whether the start may upgrade the schema (`--no-migrate`: it may not).
    pub upgrade: crate::db::Upgrade,
    /// The other sites whose pages may call the API (`--allow-origin`), as [`parse_origin`]
    /// writes them.
    pub allow_origins: Vec<String>,
    /// `--gogobee-stopped`: a database with gogobee's linear run columns may be served.
    pub gogobee_stopped: bool,
    /// Where every command's events are sent (`--events-url`), if anywhere.
    pub events_out: Option<crate::events_out::EventsOut>,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("db", &self.db)
            .field("zones", &self.zones)
            .field("listen", &self.listen)
            .field("web", &self.web)
            .field("public_url", &self.public_url)
            .field("fork_timeout", &self.fork_timeout)
            .field("auth", &self.auth)
            .field("limits", &self.limits)
            .field("sweep_every", &self.sweep_every)
            .field("admins", &self.admins)
            .field("characters", &self.characters)
            .field("game", &self.game)
            .field("listen_db", &self.listen_db)
            .field("upgrade", &self.upgrade)
            .field("allow_origins", &self.allow_origins)
            .field("gogobee_stopped", &self.gogobee_stopped)
            .field("events_out", &self.events_out)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// Where the built viewer is looked for (`trunk build --release` writes it).
    pub const DEFAULT_WEB: &'static str = "dist";
    /// How long a fork waits before the first open option is taken: the engine's default.
    pub const DEFAULT_FORK_TIMEOUT: Duration =
        Duration::from_millis(zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS.unsigned_abs());

    /// A configuration with the CLI's defaults for `db` and `zones` on `listen` (closed: a
    /// token file beside the database; commands rate-limited).
    pub fn new(db: impl Into<DbAt>, zones: PathBuf, listen: SocketAddr) -> ServerConfig {
        ServerConfig {
            db: db.into(),
            zones,
            listen,
            web: PathBuf::from(Self::DEFAULT_WEB),
            public_url: None,
            fork_timeout: Self::DEFAULT_FORK_TIMEOUT,
            auth: Auth::TokenFile,
            limits: Limits::default(),
            sweep_every: Duration::from_secs(30),
            run_ids: store::random_run_ids(),
            admins: Vec::new(),
            characters: CharacterRules::AdminsOnly,
            game: GameSettings::default(),
            listen_db: true,
            upgrade: crate::db::Upgrade::Migrate,
            allow_origins: Vec::new(),
            gogobee_stopped: false,
            events_out: None,
        }
    }
}

/// `--allow-origin`: a web origin, `scheme://host[:port]` (http or https, no path), written
/// lowercase as browsers send it in `Origin`.
pub fn parse_origin(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t == "*" || t == "null" {
        return Err(format!(
            "--allow-origin takes one site's origin (https://game.example.org), not {t}: \
             allowing any site (or a sandboxed page) is what the cross-site check stops"
        ));
    }
    let Some((scheme, host)) = t.trim_end_matches('/').split_once("://") else {
        return Err(format!(
            "{t:?} is not an origin: write scheme://host[:port], as https://game.example.org"
        ));
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("{t:?}: an origin allowed is http:// or https://"));
    }
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.:[]_".contains(c));
    if !host_ok {
        return Err(format!(
            "{t:?} is not an origin: after {scheme}:// comes a host and maybe a port, with no \
             path, query, user or spaces"
        ));
    }
    Ok(format!("{scheme}://{}", host.to_ascii_lowercase()))
}

/// A tenth of the timeout, between 100 ms and 30 s.
pub fn sweep_interval(timeout: Duration) -> Duration {
    (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(30))
}
