//! `zonegraph serve`: the bot's server — the store, the HTTP API, the viewer and the
//! fork-timeout sweeper, on one tokio runtime.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use tokio::sync::oneshot;
use zonegraph_core::limits::Rate;

use crate::http::{self, Access, AppState, Limits};
use crate::service::{self, Service};
use crate::store::{self, CharacterRules, CommandSettings, DbAt, GameSettings, RunIds, Store};
use crate::streams::Streams;

#[derive(clap::Args)]
pub struct Args {
    /// The database: a SQLite file (created on first start), or a PostgreSQL URL
    /// (postgres://user@host/dbname) that several instances share. Prefer
    /// ZONEGRAPH_DATABASE_URL for a URL with a password.
    #[arg(
        long,
        env = "ZONEGRAPH_DATABASE_URL",
        hide_env_values = true,
        default_value = "zonegraph.db",
        value_parser = parse_db
    )]
    pub db: DbAt,
    /// Directory of zone files: at every start and on SIGHUP, its new and newer files are
    /// checked and imported as zone versions (a file older than the database's version is
    /// left alone and named). May be empty when the database has the zones.
    #[arg(long, default_value = "zones")]
    pub zones: PathBuf,
    /// PostgreSQL behind a transaction pooler (PgBouncer), where LISTEN does not reach:
    /// instances find each other's changes by polling alone (every half second).
    #[arg(long)]
    pub no_listen: bool,
    /// Refuse a database that is not at this zonegraph's schema instead of upgrading it (an
    /// upgrade cannot be undone: run `zonegraph migrate` for it, when you choose).
    #[arg(long)]
    pub no_migrate: bool,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// The built viewer (`trunk build --release` writes dist/).
    #[arg(long, default_value = "dist")]
    pub web: PathBuf,
    /// The URL players reach this server at (run-map links); default http://LISTEN.
    #[arg(long)]
    pub public_url: Option<String>,
    /// How long a fork waits before the first open option is taken: 6h, 30m, 90s, 500ms.
    #[arg(long, default_value = "6h", value_parser = parse_duration)]
    pub fork_timeout: Duration,
    /// Bearer token the API requires (also ZONEGRAPH_API_TOKEN; prefer the environment).
    /// Without one, a random token is made at the first start and kept in <db>.api-token.
    #[arg(long, env = "ZONEGRAPH_API_TOKEN", hide_env_values = true)]
    pub api_token: Option<String>,
    /// No token at all, for local experiments: only requests for localhost (or the listen
    /// address) by name are answered, and only on a loopback address.
    #[arg(long, conflicts_with = "api_token")]
    pub no_auth: bool,
    /// Commands per user: PER_SECOND/BURST (e.g. 2/10, 0.5/5), or `off` (load tests).
    #[arg(long, default_value = "2/10", value_parser = parse_rate_limit)]
    pub rate_limit: RateLimit,
    /// A user who may set anyone's character sheet (`!char set @user level 5`, `!char grant`,
    /// `!char revoke`); repeat for more. Every change is logged on stderr.
    #[arg(long = "admin", value_name = "USER")]
    pub admins: Vec<String>,
    /// Players edit their own sheets (`!char level 5`, `!char wis 14`, `!char key add …`),
    /// for designers' playtests.
    #[arg(long)]
    pub sandbox: bool,
    /// The scores of a new player's sheet, STR,DEX,CON,INT,WIS,CHA (built-in rules).
    #[arg(long, default_value = "15,14,13,12,10,8", value_parser = parse_scores)]
    pub starting_scores: Scores,
    /// A host game (http://host:port/path) that owns character sheets and decides encounters:
    /// `POST URL/character` and `POST URL/encounter` (see docs/guide/game.md).
    #[arg(long, value_name = "URL")]
    pub host_hook: Option<String>,
    /// On a gogobee database that still has gogobee's linear run columns: gogobee no longer
    /// serves zone commands from it (the two cannot share it: each reads the other's forks as
    /// none). Without it such a database is refused, and nothing is changed.
    #[arg(long)]
    pub gogobee_stopped: bool,
    /// On a gogobee database: write a carried character's level and XP back to gogobee's
    /// dnd_character as it advances here (on gogobee's XP curve, never lowering what gogobee
    /// holds), so gogobee's other games see it. Off: gogobee's tables are only read.
    #[arg(long)]
    pub gogobee_write_back: bool,
    /// Another site whose pages may call the API (https://game.example.org): its requests
    /// pass the cross-site check and are answered with CORS headers; repeat for more. Every
    /// other site's browser requests stay refused. A token is still needed (or, with
    /// --no-auth, a Host naming this machine).
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub allow_origins: Vec<String>,
    /// A host game's endpoint (https://game.example.org/zonegraph/events) that gets every
    /// event of every command (entered, moved, fork offered, key granted, loot, XP and level,
    /// the run's end) as a signed POST: at least once, in order per player, retried with
    /// backoff. Needs ZONEGRAPH_EVENTS_SECRET, the shared secret of the signature.
    #[arg(long, value_name = "URL")]
    pub events_url: Option<String>,
    /// The secret events are signed with (set it in ZONEGRAPH_EVENTS_SECRET).
    #[arg(
        long,
        env = "ZONEGRAPH_EVENTS_SECRET",
        hide_env_values = true,
        hide = true
    )]
    pub events_secret: Option<String>,
    /// Bearer token sent to the host game (set it in ZONEGRAPH_HOST_HOOK_TOKEN).
    #[arg(
        long,
        env = "ZONEGRAPH_HOST_HOOK_TOKEN",
        hide_env_values = true,
        hide = true
    )]
    pub host_hook_token: Option<String>,
    #[cfg(feature = "matrix")]
    #[command(flatten)]
    pub matrix: crate::matrix::MatrixArgs,
}

/// Without its secrets: the API token and the hook's token say only whether they are set,
/// the database URL is shown without its password.
impl std::fmt::Debug for Args {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |o: &Option<String>| o.as_ref().map(|_| "…");
        let mut d = f.debug_struct("Args");
        d.field("db", &self.db)
            .field("zones", &self.zones)
            .field("listen", &self.listen)
            .field("web", &self.web)
            .field("public_url", &self.public_url)
            .field("api_token", &set(&self.api_token))
            .field("no_auth", &self.no_auth)
            .field("admins", &self.admins)
            .field("host_hook", &self.host_hook)
            .field("host_hook_token", &set(&self.host_hook_token))
            .field("events_url", &self.events_url)
            .field("events_secret", &set(&self.events_secret))
            .field("allow_origins", &self.allow_origins)
            .field("gogobee_write_back", &self.gogobee_write_back)
            .field("gogobee_stopped", &self.gogobee_stopped);
        #[cfg(feature = "matrix")]
        d.field("matrix", &self.matrix);
        d.finish_non_exhaustive()
    }
}

pub use crate::db::parse_db;

/// `--starting-scores`: six ability scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scores(pub [i32; 6]);

/// Parses six comma-separated scores in STR, DEX, CON, INT, WIS, CHA order.
pub fn parse_scores(s: &str) -> Result<Scores, String> {
    let usage = || format!("{s:?} is not six scores like 15,14,13,12,10,8 (STR to CHA, 1-30)");
    let parsed: Vec<i32> = s
        .split(',')
        .map(|p| p.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| usage())?;
    let scores: [i32; 6] = parsed.try_into().map_err(|_| usage())?;
    if !scores
        .iter()
        .all(|v| zonegraph_core::engine::SCORE_RANGE.contains(v))
    {
        return Err(usage());
    }
    Ok(Scores(scores))
}

/// `--rate-limit`: a rate, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit(pub Option<Rate>);

/// Parses `PER_SECOND/BURST` (`2/10`, `0.5/5`) or `off`.
pub fn parse_rate_limit(s: &str) -> Result<RateLimit, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("off") {
        return Ok(RateLimit(None));
    }
    let usage = || format!("{s:?} is not a rate limit like 2/10 (per second/burst) or off");
    let (rate, burst) = s.split_once('/').ok_or_else(usage)?;
    let (whole, frac) = rate.trim().split_once('.').unwrap_or((rate.trim(), ""));
    if whole.is_empty() && frac.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 3
    {
        return Err(usage());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| usage())?
    };
    let milli: u64 = format!("{frac:0<3}").parse().map_err(|_| usage())?;
    let per_second_milli = whole
        .checked_mul(1000)
        .and_then(|w| w.checked_add(milli))
        .ok_or_else(usage)?;
    let burst: u32 = burst.trim().parse().map_err(|_| usage())?;
    if per_second_milli == 0 || burst == 0 {
        return Err(format!(
            "{s:?} would refuse every command; use `off` for no limit"
        ));
    }
    Ok(RateLimit(Some(Rate {
        per_second_milli,
        burst,
    })))
}

/// Parses `6h`, `30m`, `90s`, `500ms`, `1h30m`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "{s:?} is not a duration like 6h, 30m, 90s or 500ms"
            ));
        }
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{s:?}: number too large"))?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let part = match unit {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            "d" => Duration::from_secs(n.saturating_mul(86_400)),
            _ => {
                return Err(format!(
                    "{s:?}: unknown unit {unit:?} (use ms, s, m, h or d)"
                ));
            }
        };
        total = total.saturating_add(part);
    }
    Ok(total)
}

/// How the transport routes are protected.
#[derive(Clone)]
pub enum Auth {
    /// `--api-token` / `ZONEGRAPH_API_TOKEN`.
    Token(String),
    /// Neither: a random token kept in `<db>.api-token` (mode 0600), made at the first start
    /// and reused.
    TokenFile,
    /// `--no-auth`.
    Off,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Auth::Token(_) => "Token(<set>)",
            Auth::TokenFile => "TokenFile",
            Auth::Off => "Off",
        })
    }
}

/// `<db>.api-token`, next to the database.
pub fn token_file(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".api-token");
    PathBuf::from(s)
}

/// The token kept in `path`, made (128 random bits, mode 0600 from the first byte) when the
/// file does not exist yet.
pub fn read_or_make_token(path: &Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if token.is_empty() {
                bail!(
                    "the API token file {} is empty; delete it to have a new token made",
                    path.display()
                );
            }
            return Ok(token);
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
    Ok(token)
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
    /// A configuration with the CLI's defaults for `db` and `zones` on `listen` (closed: a
    /// token file beside the database; commands rate-limited).
    pub fn new(db: impl Into<DbAt>, zones: PathBuf, listen: SocketAddr) -> ServerConfig {
        ServerConfig {
            db: db.into(),
            zones,
            listen,
            web: PathBuf::from("dist"),
            public_url: None,
            fork_timeout: Duration::from_millis(
                zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS as u64,
            ),
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

    /// From the command line; refuses `--no-auth` on anything but loopback.
    pub fn from_args(args: &Args) -> Result<ServerConfig> {
        let addrs: Vec<SocketAddr> = args
            .listen
            .to_socket_addrs()
            .with_context(|| format!("--listen {:?} is not an address", args.listen))?
            .collect();
        let Some(&listen) = addrs.first() else {
            bail!("--listen {:?} resolves to no address", args.listen);
        };
        let token = args.api_token.clone().filter(|t| !t.trim().is_empty());
        if args.no_auth && !addrs.iter().all(|a| a.ip().is_loopback()) {
            bail!(
                "refusing --no-auth on {}: anyone who can reach it could play as anyone; \
                 leave --no-auth out (a token is made for you), or listen on 127.0.0.1",
                args.listen
            );
        }
        let mut c = ServerConfig::new(args.db.clone(), args.zones.clone(), listen);
        c.web = args.web.clone();
        c.public_url = args.public_url.clone();
        c.fork_timeout = args.fork_timeout;
        c.auth = match (token, args.no_auth) {
            (Some(t), _) => Auth::Token(t.trim().to_string()),
            (None, true) => Auth::Off,
            (None, false) => Auth::TokenFile,
        };
        c.limits.rate = args.rate_limit.0;
        c.sweep_every = sweep_interval(args.fork_timeout);
        c.admins = args.admins.iter().map(|a| a.trim().to_string()).collect();
        c.characters = if args.sandbox {
            CharacterRules::Sandbox
        } else {
            CharacterRules::AdminsOnly
        };
        c.listen_db = !args.no_listen;
        if args.no_migrate {
            c.upgrade = crate::db::Upgrade::Refuse;
        }
        c.allow_origins = args.allow_origins.clone();
        c.gogobee_stopped = args.gogobee_stopped;
        c.game.starting_scores = args.starting_scores.0;
        c.game.gogobee_write_back = args.gogobee_write_back;
        c.game.host_hook = args
            .host_hook
            .as_deref()
            .map(|url| crate::host::HostHook::new(url, args.host_hook_token.clone()))
            .transpose()?;
        c.events_out = args
            .events_url
            .as_deref()
            .map(|url| {
                crate::events_out::EventsOut::new(url, args.events_secret.as_deref().unwrap_or(""))
            })
            .transpose()?;
        Ok(c)
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

/// A server running on its own runtime thread.
#[derive(Debug)]
pub struct Server {
    pub addr: SocketAddr,
    pub public_url: String,
    pub store: Arc<Store>,
    /// Zone warnings and the legacy warm-up, for the start-up message.
    pub opened: store::Opened,
    pub viewer: Option<PathBuf>,
    /// What transports call (its `service`: `command`, `notices`, `ack_notices`): a Matrix
    /// transport runs its sync loop on [`Server::runtime`] with a clone of this.
    pub state: AppState,
    /// Where the API token is kept, when the server made or read it there.
    pub token_file: Option<PathBuf>,
    runtime: tokio::runtime::Handle,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
    /// Follows the other instances' changes while the server runs.
    _watcher: Watcher,
}

impl Server {
    /// The server's tokio runtime, to spawn another transport's tasks on.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// The bearer token the API needs (`None` with `--no-auth`).
    pub fn api_token(&self) -> Option<&str> {
        match &self.state.access {
            Access::Token(t) => Some(t),
            Access::Open { .. } => None,
        }
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, finishes the requests in flight and waits for the runtime.
    pub fn stop(mut self) -> Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow::anyhow!("the server thread panicked"))?,
            None => Ok(()),
        }
    }

    /// Blocks until the server stops by itself (it does not, short of an error).
    pub fn wait(mut self) -> Result<()> {
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow::anyhow!("the server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

/// Opens the store (validating and importing the zones), binds, and serves on a new thread.
pub fn spawn(config: ServerConfig) -> Result<Server> {
    if matches!(config.auth, Auth::TokenFile) && config.db.file().is_none() {
        // Instances on several machines must share one token, and there is no file beside
        // a PostgreSQL database to keep it in.
        bail!(
            "with a PostgreSQL database, set the API token in ZONEGRAPH_API_TOKEN (the same \
             for every instance), or pass --no-auth on a loopback address"
        );
    }
    if let Some(path) = config.db.file()
        && !config.gogobee_stopped
        && crate::db::gogobee_columns_at(path)?
    {
        bail!("{}", store::gogobee_refused(path));
    }
    let (mut store, opened) = Store::open_as(&config.db, &config.zones, config.upgrade)?;
    store.set_game(config.game.clone());
    store.set_events_out(config.events_out.is_some());
    let store = Arc::new(store);
    let listener = TcpListener::bind(config.listen)
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let public_url = config
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"))
        .trim_end_matches('/')
        .to_string();
    let viewer = config
        .web
        .join("index.html")
        .is_file()
        .then(|| config.web.clone());
    let settings = CommandSettings {
        public_url: public_url.clone(),
        fork_timeout_ms: i64::try_from(config.fork_timeout.as_millis()).unwrap_or(i64::MAX),
        run_ids: config.run_ids.clone(),
        admins: Arc::new(config.admins.iter().cloned().collect()),
        characters: config.characters,
    };
    let (access, token_file) = match &config.auth {
        Auth::Token(t) => (Access::Token(t.clone()), None),
        Auth::TokenFile => {
            let Some(db) = config.db.file() else {
                bail!("the API token file lives beside a SQLite database");
            };
            let path = token_file(db);
            (Access::Token(read_or_make_token(&path)?), Some(path))
        }
        Auth::Off => (Access::Open { listen: addr }, None),
    };
    let streams = Streams::new(
        store.clone(),
        config.limits.streams.within(open_file_limit()),
    );
    let watcher = Watcher::start(store.clone(), streams.clone(), config.listen_db)?;
    let state = AppState {
        service: Service::new(store.clone(), settings, config.limits.rate),
        access,
        allow_origins: config.allow_origins.clone().into(),
        web: viewer.clone(),
        streams,
        health: Arc::default(),
    };
    let limits = config.limits;
    let (tx, rx) = oneshot::channel::<()>();
    // Open event streams end when the server stops (a graceful stop waits for them).
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    let sweep_every = config.sweep_every;
    let events_out = config.events_out.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let runtime = rt.handle().clone();
    let app_state = state.clone();
    let thread = std::thread::Builder::new()
        .name("zonegraph-server".into())
        .spawn(move || -> Result<()> {
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                let sweeper =
                    tokio::spawn(service::sweep_forever(state.service.clone(), sweep_every));
                let housekeeper = tokio::spawn(service::housekeep_forever(state.service.clone()));
                let events = events_out.map(|out| {
                    tokio::spawn(service::send_events_forever(state.service.clone(), out))
                });
                let app =
                    http::router(state, &limits).layer(axum::Extension(http::Closing(closing_rx)));
                serve_http(listener, app, async move {
                    let _ = rx.await;
                    let _ = closing_tx.send(true);
                })
                .await;
                sweeper.abort();
                housekeeper.abort();
                if let Some(events) = events {
                    events.abort();
                }
                Ok(())
            })
        })?;
    Ok(Server {
        addr,
        public_url,
        store,
        opened,
        viewer,
        state: app_state,
        token_file,
        runtime,
        shutdown: Some(tx),
        thread: Some(thread),
        _watcher: watcher,
    })
}

/// How often an instance looks for the changes other instances (or `zonegraph zones`) made,
/// without a wake-up: a missed notification, a pooler that passes none, SQLite.
pub const POLL_EVERY: Duration = Duration::from_millis(500);

/// The thread that brings this instance up to date with the others: at each wake-up from
/// the database (a notification at another instance's commit) and every [`POLL_EVERY`], it
/// serves the zones as the database has them and tells the run pages' feeds whose run or
/// sheet changed. Stopped when dropped.
#[derive(Debug)]
struct Watcher {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(store: Arc<Store>, streams: Arc<Streams>, listen: bool) -> Result<Watcher> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("zonegraph-watch".into())
            .spawn(move || {
                let wakeups = store.wakeups(listen);
                // Said once per failing streak, not every half second.
                let mut failing = false;
                while !stopped.load(Ordering::SeqCst) {
                    let caught = store
                        .refresh_zones()
                        .and_then(|_| streams.catch_up().map(|_| ()))
                        .and_then(|()| {
                            // A revoked token is refused within REFRESH_EVERY everywhere.
                            if store.tokens().due(crate::tokens::REFRESH_EVERY) {
                                for w in store.refresh_tokens()? {
                                    eprintln!("zonegraph: {w}");
                                }
                            }
                            Ok(())
                        });
                    match caught {
                        Ok(()) if failing => {
                            eprintln!("zonegraph: following other instances again");
                            failing = false;
                        }
                        Ok(()) => {}
                        Err(e) if !failing => {
                            eprintln!("zonegraph: cannot follow other instances' changes: {e:#}");
                            failing = true;
                        }
                        Err(_) => {}
                    }
                    wakeups.wait(POLL_EVERY);
                }
            })
            .context("cannot start the watcher")?;
        Ok(Watcher {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How long a client has to send a request's head, and an idle kept-alive connection to
/// start its next one: a half-sent request holds a socket no longer than this.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `stop` ends, then waits for the open connections (the
/// event streams end when told to). HTTP/1.1 by hyper with its timer, so that
/// [`HEADER_READ_TIMEOUT`] is in force (`axum::serve` sets none). An accept that fails (out
/// of open files) is tried again after a pause rather than in a busy loop.
async fn serve_http(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    stop: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let mut failing = crate::service::Failing::default();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if let Some(line) = failing.ok("accepting connections again") {
                        eprintln!("zonegraph: {line}");
                    }
                    stream
                }
                Err(e) => {
                    if let Some(line) = failing.failed(&format!("cannot accept a connection ({e})")) {
                        eprintln!("zonegraph: {line}");
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let conn =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The process's open-file limit (soft), or a common default where it cannot be read.
fn open_file_limit() -> u64 {
    #[cfg(unix)]
    if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::NOFILE) {
        return soft;
    }
    1_024
}

/// Raises the soft open-file limit to the hard one (a live stream is a socket) and says
/// what it is now.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => eprintln!("zonegraph: open-file limit: {n}"),
        Err(e) => eprintln!(
            "zonegraph: cannot raise the open-file limit ({e}); it stays {}",
            open_file_limit()
        ),
    }
}

/// SIGHUP reloads the zone files, all or nothing: a directory with any error leaves the
/// zones served as they were, and says why on stderr.
#[cfg(unix)]
async fn reload_on_hangup(store: Arc<Store>) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("zonegraph: SIGHUP will not reload the zones: {e}");
            return;
        }
    };
    while hangups.recv().await.is_some() {
        let s = store.clone();
        match tokio::task::spawn_blocking(move || s.reload()).await {
            Ok(Ok(warnings)) => {
                for w in warnings {
                    eprintln!("zonegraph: {w}");
                }
                eprintln!(
                    "zonegraph: SIGHUP: reloaded the zones; serving {}",
                    store.zones().len()
                );
            }
            Ok(Err(e)) => eprintln!("zonegraph: SIGHUP: the zones served are unchanged: {e:#}"),
            Err(e) => eprintln!("zonegraph: SIGHUP: the reload failed: {e}"),
        }
    }
}

/// Ctrl-C, or SIGTERM (a service manager) on Unix. Stopping is graceful, but nothing depends
/// on it: every acknowledged command is already committed.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// What the Matrix state directory is named after: the SQLite file (`<db>.matrix`), or for
/// PostgreSQL `zonegraph.matrix` in the working directory (each instance keeps its own).
#[cfg(feature = "matrix")]
fn matrix_base(db: &DbAt) -> PathBuf {
    db.file()
        .map_or_else(|| PathBuf::from("zonegraph"), Path::to_path_buf)
}

/// `zonegraph serve`: starts, says where and how to talk to the bot, runs until Ctrl-C.
pub fn run(args: &Args) -> Result<ExitCode> {
    let config = ServerConfig::from_args(args)?;
    raise_open_file_limit();
    #[cfg(feature = "matrix")]
    let matrix = args
        .matrix
        .matrix
        .then(|| crate::matrix::Config::from_args(&args.matrix, &matrix_base(&args.db)))
        .transpose()?;
    let web = config.web.clone();
    let server = spawn(config)?;
    for w in &server.opened.warnings {
        eprintln!("zonegraph: {w}");
    }
    let warm = &server.opened.warm_up;
    if warm.warmed > 0 || warm.forks > 0 || !warm.stuck.is_empty() || !warm.abandoned.is_empty() {
        for line in warm.report() {
            eprintln!("zonegraph: {line}");
        }
    }
    let url = server.url();
    let public = server.public_url.clone();
    println!(
        "zonegraph: serving {} zones from {} on {url} (database {})",
        server.store.zones().len(),
        args.zones.display(),
        args.db
    );
    match &server.viewer {
        Some(dir) => println!(
            "  run maps: {public}/run/<token>  (viewer from {})",
            dir.display()
        ),
        None => println!(
            "  viewer: not built ({} has no index.html): `trunk build --release`, then restart",
            web.display()
        ),
    }
    println!("  talk to the bot:");
    let auth = match (&server.token_file, server.api_token()) {
        (Some(file), _) => {
            println!(
                "    API token: in {} (made at the first start, reused after; delete the file \
                 for a new one)",
                file.display()
            );
            format!(" -H \"authorization: Bearer $(cat {})\"", file.display())
        }
        (None, Some(_)) => " -H \"authorization: Bearer $ZONEGRAPH_API_TOKEN\"".to_string(),
        (None, None) => {
            eprintln!(
                "zonegraph: WARNING: --no-auth: the API needs no token. Anyone on this machine \
                 can play as anyone; only requests for localhost, 127.0.0.1, [::1] or {url} by \
                 name are answered. For local experiments only."
            );
            String::new()
        }
    };
    println!(
        "    curl -s {url}/api/command{auth} -H 'content-type: application/json' \\\n      -d '{{\"user\":\"@you:example.org\",\"text\":\"!zone help\"}}'"
    );
    #[cfg(feature = "matrix")]
    let _matrix = match &matrix {
        Some(m) => {
            // On a shared database, the instance that holds the sync lock runs the bot.
            let task = if args.db.is_shared() {
                crate::matrix::start_when_held(server.runtime(), &server.state.service, m)?
            } else {
                crate::matrix::start(server.runtime(), &server.state.service, m)?
            };
            println!(
                "  matrix: {} on {}: invite it, then `!zone help`",
                m.user, m.homeserver
            );
            Some(task)
        }
        None => None,
    };
    if args.sandbox {
        println!("  sandbox: players edit their own character sheets");
    }
    if !args.admins.is_empty() {
        println!(
            "  admins (may set anyone's sheet): {}",
            args.admins.join(", ")
        );
    }
    if let Some(url) = &args.host_hook {
        println!("  host game: {url} keeps character sheets and decides encounters");
    }
    if let Some(url) = &args.events_url {
        println!("  events: every command's events are sent to {url}, signed");
    }
    #[cfg(unix)]
    {
        server
            .runtime()
            .spawn(reload_on_hangup(server.store.clone()));
        println!(
            "  publish zones with POST /api/zones; SIGHUP reloads {} (all or nothing)",
            args.zones.display()
        );
    }
    println!("  Ctrl-C (or SIGTERM) stops it.");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(stop_signal());
    eprintln!("zonegraph: stopping");
    server.stop()?;
    Ok(ExitCode::SUCCESS)
}
