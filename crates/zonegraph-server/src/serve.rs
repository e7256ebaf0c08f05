//! `zonegraph serve`: the bot's server — the store, the HTTP API, the viewer and the
//! fork-timeout sweeper, on one tokio runtime.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use tokio::sync::oneshot;

use crate::http::{self, AppState, UserLocks};
use crate::store::{self, CommandSettings, RunIds, Store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// SQLite database (created on first start).
    #[arg(long, default_value = "zonegraph.db")]
    pub db: PathBuf,
    /// Directory of zone files: validated and imported at every start.
    #[arg(long, default_value = "zones")]
    pub zones: PathBuf,
    /// Address to listen on; anything but loopback needs --api-token.
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
    #[arg(long, env = "ZONEGRAPH_API_TOKEN", hide_env_values = true)]
    pub api_token: Option<String>,
    #[cfg(feature = "matrix")]
    #[command(flatten)]
    pub matrix: crate::matrix::MatrixArgs,
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

/// Everything a server needs; tests build one directly.
#[derive(Clone)]
pub struct ServerConfig {
    pub db: PathBuf,
    pub zones: PathBuf,
    pub listen: SocketAddr,
    pub web: PathBuf,
    pub public_url: Option<String>,
    pub fork_timeout: Duration,
    pub api_token: Option<String>,
    /// How often the sweeper looks for timed-out forks.
    pub sweep_every: Duration,
    /// Run ids (they decide every roll); random unless a test injects its own.
    pub run_ids: RunIds,
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
            .field("api_token", &self.api_token.as_ref().map(|_| "<set>"))
            .field("sweep_every", &self.sweep_every)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// A configuration with the CLI's defaults for `db` and `zones` on `listen`.
    pub fn new(db: PathBuf, zones: PathBuf, listen: SocketAddr) -> ServerConfig {
        ServerConfig {
            db,
            zones,
            listen,
            web: PathBuf::from("dist"),
            public_url: None,
            fork_timeout: Duration::from_millis(
                zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS as u64,
            ),
            api_token: None,
            sweep_every: Duration::from_secs(30),
            run_ids: store::random_run_ids(),
        }
    }

    /// From the command line; refuses a non-loopback address without a token.
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
        if token.is_none() && !addrs.iter().all(|a| a.ip().is_loopback()) {
            bail!(
                "refusing to listen on {} without an API token: anyone who can reach it could \
                 play as anyone; pass --api-token (or set ZONEGRAPH_API_TOKEN), or listen on \
                 127.0.0.1",
                args.listen
            );
        }
        let mut c = ServerConfig::new(args.db.clone(), args.zones.clone(), listen);
        c.web = args.web.clone();
        c.public_url = args.public_url.clone();
        c.fork_timeout = args.fork_timeout;
        c.api_token = token;
        c.sweep_every = sweep_interval(args.fork_timeout);
        Ok(c)
    }
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
    /// What transports call (`AppState::command`, `take_notices`): a Matrix transport runs
    /// its sync loop on [`Server::runtime`] with a clone of this.
    pub state: AppState,
    runtime: tokio::runtime::Handle,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

impl Server {
    /// The server's tokio runtime, to spawn another transport's tasks on.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
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
    let (store, opened) = Store::open(&config.db, &config.zones)?;
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
    };
    let state = AppState {
        store: store.clone(),
        settings,
        api_token: config.api_token.clone(),
        web: viewer.clone(),
        locks: UserLocks::default(),
    };
    let (tx, rx) = oneshot::channel::<()>();
    let sweep_every = config.sweep_every;
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
                let sweeper = tokio::spawn(sweep_forever(state.clone(), sweep_every));
                let app = http::router(state);
                let served = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await;
                sweeper.abort();
                served.context("the HTTP server failed")
            })
        })?;
    Ok(Server {
        addr,
        public_url,
        store,
        opened,
        viewer,
        state: app_state,
        runtime,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}

/// The sweeper: applies the fork timeout every `every`, one user at a time under their
/// lock, queueing the "picked for you" notices.
async fn sweep_forever(state: AppState, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let store = state.store.clone();
        let timeout = state.settings.fork_timeout_ms;
        let due =
            tokio::task::spawn_blocking(move || store.due_users(store::now_ms(), timeout)).await;
        let users = match due {
            Ok(Ok(users)) => users,
            Ok(Err(e)) => {
                eprintln!("zonegraph: sweeper: {e:#}");
                continue;
            }
            Err(e) => {
                eprintln!("zonegraph: sweeper: {e}");
                continue;
            }
        };
        for user in users {
            let store = state.store.clone();
            let settings = state.settings.clone();
            let u = user.clone();
            let res = state
                .locks
                .with(&user, async move {
                    tokio::task::spawn_blocking(move || store.sweep_user(&u, &settings)).await
                })
                .await;
            match res {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => eprintln!("zonegraph: sweeper: {user}: {e:#}"),
                Err(e) => eprintln!("zonegraph: sweeper: {user}: {e}"),
            }
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

/// `zonegraph serve`: starts, says where and how to talk to the bot, runs until Ctrl-C.
pub fn run(args: &Args) -> Result<ExitCode> {
    let config = ServerConfig::from_args(args)?;
    #[cfg(feature = "matrix")]
    let matrix = args
        .matrix
        .matrix
        .then(|| crate::matrix::Config::from_args(&args.matrix, &args.db))
        .transpose()?;
    let web = config.web.clone();
    let server = spawn(config)?;
    for w in &server.opened.warnings {
        eprintln!("zonegraph: {w}");
    }
    let warm = &server.opened.warm_up;
    if warm.warmed > 0 {
        eprintln!(
            "zonegraph: warmed up {} legacy run{} from current_room",
            warm.warmed,
            if warm.warmed == 1 { "" } else { "s" }
        );
    }
    for (id, zone, why) in &warm.stuck {
        eprintln!("zonegraph: legacy run row {id} (zone {zone}) kept as it is: {why}");
    }
    let url = server.url();
    let public = server.public_url.clone();
    println!(
        "zonegraph: serving {} zones from {} on {url} (database {})",
        server.store.zones().len(),
        args.zones.display(),
        args.db.display()
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
    let auth = if args.api_token.is_some() {
        " -H \"authorization: Bearer $ZONEGRAPH_API_TOKEN\""
    } else {
        ""
    };
    println!("  talk to the bot:");
    println!(
        "    curl -s {url}/api/command{auth} -H 'content-type: application/json' \\\n      -d '{{\"user\":\"@you:example.org\",\"text\":\"!zone help\"}}'"
    );
    #[cfg(feature = "matrix")]
    let _matrix = match &matrix {
        Some(m) => {
            let task = crate::matrix::start(server.runtime(), &server.state, m)?;
            println!(
                "  matrix: {} on {}: invite it, then `!zone help`",
                m.user, m.homeserver
            );
            Some(task)
        }
        None => None,
    };
    println!("  Ctrl-C (or SIGTERM) stops it.");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(stop_signal());
    eprintln!("zonegraph: stopping");
    server.stop()?;
    Ok(ExitCode::SUCCESS)
}
