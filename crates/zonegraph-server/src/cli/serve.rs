//! `zonegraph serve`: its flags (each default written once, as a typed constant beside what
//! it fills), the server's configuration from them, and the banner that says where and how to
//! talk to the bot; the server itself is `crate::server`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};

use super::args::{DbArg, RateLimit, Scores, Span, parse_rate_limit, parse_scores, parse_span};
use crate::http::Limits;
use crate::secret::Secret;
use crate::server::{self, Auth, ServerConfig, parse_origin, sweep_interval};
use crate::store::{CharacterRules, DbAt};

/// `zonegraph serve`'s flags; the secrets among them are [`Secret`]s, so `Debug` shows only
/// that they are set (and the database URL without its password).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
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
    #[arg(long, default_value = ServerConfig::DEFAULT_WEB)]
    pub web: PathBuf,
    /// The URL players reach this server at (run-map links); default http://LISTEN.
    #[arg(long)]
    pub public_url: Option<String>,
    /// How long a fork waits before the first open option is taken: 30m, 90s, 500ms, 1h30m.
    #[arg(long, default_value_t = Span(ServerConfig::DEFAULT_FORK_TIMEOUT), value_parser = parse_span)]
    pub fork_timeout: Span,
    /// Bearer token the API requires (also ZONEGRAPH_API_TOKEN; prefer the environment).
    /// Without one, a random token is made at the first start and kept in <db>.api-token.
    #[arg(long, env = "ZONEGRAPH_API_TOKEN", hide_env_values = true)]
    pub api_token: Option<Secret>,
    /// No token at all, for local experiments: only requests for localhost (or the listen
    /// address) by name are answered, and only on a loopback address.
    #[arg(long, conflicts_with = "api_token")]
    pub no_auth: bool,
    /// Commands per user: PER_SECOND/BURST (e.g. 0.5/5), or `off` (load tests).
    #[arg(long, default_value_t = RateLimit(Some(Limits::DEFAULT_RATE)), value_parser = parse_rate_limit)]
    pub rate_limit: RateLimit,
    /// How many ended runs a review before publishing replays: the most recent (the answer
    /// says how many older ones it left out).
    #[arg(long, default_value_t = crate::store::review::REVIEW_RUNS)]
    pub review_runs: usize,
    /// A user who may set anyone's character sheet (`!char set @user level 5`, `!char grant`,
    /// `!char revoke`); repeat for more. Every change is logged on stderr.
    #[arg(long = "admin", value_name = "USER")]
    pub admins: Vec<String>,
    /// Players edit their own sheets (`!char level 5`, `!char wis 14`, `!char key add …`),
    /// for designers' playtests.
    #[arg(long)]
    pub sandbox: bool,
    /// The scores of a new player's sheet, STR,DEX,CON,INT,WIS,CHA (built-in rules).
    #[arg(long, default_value_t = Scores::STARTING, value_parser = parse_scores)]
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
    pub events_secret: Option<Secret>,
    /// Bearer token sent to the host game (set it in ZONEGRAPH_HOST_HOOK_TOKEN).
    #[arg(
        long,
        env = "ZONEGRAPH_HOST_HOOK_TOKEN",
        hide_env_values = true,
        hide = true
    )]
    pub host_hook_token: Option<Secret>,
    #[cfg(feature = "matrix")]
    #[command(flatten)]
    pub matrix: MatrixFlags,
}

/// Matrix flags of `zonegraph serve` (secrets are kept out of `Debug` by [`Secret`]). Secrets belong in the environment or the config file.
#[derive(Debug, Default, Clone, clap::Args)]
#[command(next_help_heading = "Matrix (with --matrix)")]
pub struct MatrixFlags {
    /// Also run the Matrix bot (needs a homeserver, a user and a password or token).
    #[arg(long)]
    pub matrix: bool,
    /// JSON file with any of {"homeserver","user","password","token"}; flags and the
    /// environment take precedence.
    #[arg(long, value_name = "FILE")]
    pub matrix_config: Option<PathBuf>,
    /// Homeserver URL, e.g. https://matrix.example.org.
    #[arg(long, env = "ZONEGRAPH_MATRIX_HOMESERVER")]
    pub matrix_homeserver: Option<String>,
    /// The bot's user id, e.g. @zonebot:example.org.
    #[arg(long, env = "ZONEGRAPH_MATRIX_USER")]
    pub matrix_user: Option<String>,
    /// The bot's password (prefer ZONEGRAPH_MATRIX_PASSWORD).
    #[arg(long, env = "ZONEGRAPH_MATRIX_PASSWORD", hide_env_values = true)]
    pub matrix_password: Option<Secret>,
    /// An access token instead of a password (prefer ZONEGRAPH_MATRIX_TOKEN). Its device
    /// must be the bot's alone: the bot keeps that device's encryption keys.
    #[arg(long, env = "ZONEGRAPH_MATRIX_TOKEN", hide_env_values = true)]
    pub matrix_token: Option<Secret>,
    /// Who may invite the bot and talk to it: a server name (example.org) or a user id
    /// (@ann:example.org); repeatable, or comma-separated in ZONEGRAPH_MATRIX_ALLOW.
    /// Default: the bot's own homeserver.
    #[arg(
        long,
        env = "ZONEGRAPH_MATRIX_ALLOW",
        value_name = "SERVER|USER",
        value_delimiter = ','
    )]
    pub matrix_allow: Vec<String>,
}

#[cfg(feature = "matrix")]
impl MatrixFlags {
    /// The flags as the Matrix transport takes them.
    fn settings(&self) -> crate::matrix::MatrixArgs {
        crate::matrix::MatrixArgs {
            matrix: self.matrix,
            matrix_config: self.matrix_config.clone(),
            matrix_homeserver: self.matrix_homeserver.clone(),
            matrix_user: self.matrix_user.clone(),
            matrix_password: self.matrix_password.clone(),
            matrix_token: self.matrix_token.clone(),
            matrix_allow: self.matrix_allow.clone(),
        }
    }
}

/// The server's configuration from the command line; refuses `--no-auth` on anything but
/// loopback.
pub fn config(args: &Args) -> Result<ServerConfig> {
    let addrs: Vec<SocketAddr> = args
        .listen
        .to_socket_addrs()
        .with_context(|| format!("--listen {:?} is not an address", args.listen))?
        .collect();
    let Some(&listen) = addrs.first() else {
        bail!("--listen {:?} resolves to no address", args.listen);
    };
    let token = args
        .api_token
        .as_ref()
        .map(|t| t.expose().trim())
        .filter(|t| !t.is_empty())
        .map(Secret::new);
    if args.no_auth && !addrs.iter().all(|a| a.ip().is_loopback()) {
        bail!(
            "refusing --no-auth on {}: anyone who can reach it could play as anyone; \
             leave --no-auth out (a token is made for you), or listen on 127.0.0.1",
            args.listen
        );
    }
    let mut c = ServerConfig::new(args.db.at.clone(), args.zones.clone(), listen);
    c.web = args.web.clone();
    c.public_url = args.public_url.clone();
    c.fork_timeout = args.fork_timeout.0;
    c.auth = match (token, args.no_auth) {
        (Some(t), _) => Auth::Token(t),
        (None, true) => Auth::Off,
        (None, false) => Auth::TokenFile,
    };
    c.limits.rate = args.rate_limit.0;
    c.limits.review_runs = args.review_runs;
    c.sweep_every = sweep_interval(args.fork_timeout.0);
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
            crate::events_out::EventsOut::new(
                url,
                args.events_secret.as_ref().map_or("", Secret::expose),
            )
        })
        .transpose()?;
    Ok(c)
}

/// PostgreSQL `zonegraph.matrix` in the working directory (each instance keeps its own).
#[cfg(feature = "matrix")]
fn matrix_base(db: &DbAt) -> PathBuf {
    db.file()
        .map_or_else(|| PathBuf::from("zonegraph"), Path::to_path_buf)
}

/// `zonegraph serve`: starts, says where and how to talk to the bot, runs until Ctrl-C.
pub fn run(args: &Args) -> Result<ExitCode> {
    let config = config(args)?;
    server::raise_open_file_limit();
    #[cfg(feature = "matrix")]
    let matrix = args
        .matrix
        .matrix
        .then(|| {
            crate::matrix::Config::from_args(&args.matrix.settings(), &matrix_base(&args.db.at))
        })
        .transpose()?;
    let web = config.web.clone();
    let server = server::spawn(config)?;
    for w in &server.opened.warnings {
        tracing::warn!("{w}");
    }
    for line in &server.opened.imported {
        tracing::info!("{line}");
    }
    let warm = &server.opened.warm_up;
    if warm.warmed > 0 || warm.forks > 0 || !warm.stuck.is_empty() || !warm.abandoned.is_empty() {
        for line in warm.report() {
            tracing::info!("{line}");
        }
    }
    let url = server.url();
    let public = server.public_url.clone();
    println!(
        "zonegraph: serving {} zones from {} on {url} (database {})",
        server.store.zones().len(),
        args.zones.display(),
        args.db.at
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
            tracing::warn!(
                "--no-auth: the API needs no token. Anyone on this machine can play as anyone; \
                 only requests for localhost, 127.0.0.1, [::1] or {url} by name are answered. \
                 For local experiments only."
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
            let task = if args.db.at.is_shared() {
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
            .spawn(server::reload_on_hangup(server.store.clone()));
        println!(
            "  publish zones with POST /api/zones; SIGHUP reloads {} (all or nothing)",
            args.zones.display()
        );
    }
    println!("  Ctrl-C (or SIGTERM) stops it.");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(server::stop_signal());
    tracing::info!("stopping");
    server.stop()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    /// Every secret `serve` takes stays out of `Debug` of its flags and of the configurations
    /// made from them.
    #[test]
    fn no_secret_shows_in_debug() {
        let mut argv = vec![
            "zonegraph",
            "serve",
            "--db",
            "postgres://zg:db-s3cret@127.0.0.1/zg",
            "--api-token",
            "api-s3cret",
            "--host-hook",
            "http://127.0.0.1:9/game",
            "--host-hook-token",
            "hook-s3cret",
            "--events-url",
            "http://127.0.0.1:9/events",
            "--events-secret",
            "events-s3cret-0123456789",
        ];
        if cfg!(feature = "matrix") {
            argv.extend([
                "--matrix-homeserver",
                "https://hs.example",
                "--matrix-user",
                "@bot:hs.example",
                "--matrix-password",
                "matrix-pw-s3cret",
                "--matrix-token",
                "matrix-tok-s3cret",
            ]);
        }
        let cli = crate::cli::Cli::try_parse_from(argv).expect("arguments");
        let crate::cli::Cmd::Serve(args) = cli.command else {
            unreachable!("a serve command")
        };
        let config = config(&args).expect("configuration");
        let mut debug = format!("{args:?}\n{config:?}");
        #[cfg(feature = "matrix")]
        {
            let settings = args.matrix.settings();
            let matrix = crate::matrix::Config::from_args(&settings, Path::new("z.db"))
                .expect("matrix configuration");
            debug.push_str(&format!("\n{settings:?}\n{matrix:?}"));
        }
        assert!(debug.contains("<set>"), "{debug}");
        assert!(!debug.contains("s3cret"), "a secret in Debug: {debug}");
    }
}
