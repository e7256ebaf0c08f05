//! A running server ([`spawn`] → [`Server`]): the store, the HTTP API, the viewer, the
//! fork-timeout sweeper, the housekeeper and the events outbox on one tokio runtime, and the
//! thread that follows other instances' changes (`watch`).

mod accept;
mod config;
mod signals;
mod watch;

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use tokio::sync::oneshot;

use crate::http::{self, Access, AppState};
use crate::service::{self, Service};
use crate::store::{self, CommandSettings, Store};
use crate::streams::Streams;

use accept::serve_http;
pub use accept::{HEADER_READ_TIMEOUT, open_file_limit, raise_open_file_limit};
pub use config::{
    Auth, ServerConfig, parse_origin, read_or_make_token, sweep_interval, token_file,
};
pub use signals::{reload_on_hangup, stop_signal};
pub use watch::POLL_EVERY;
use watch::Watcher;

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
            Access::Token(t) => Some(t.expose()),
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
        bail!("{}", crate::gogobee::carry::gogobee_refused(path));
    }
    // The metrics count from here (one recorder per process).
    crate::metrics::install();
    let (mut store, opened) = Store::open_as(&config.db, &config.zones, config.upgrade)?;
    store.set_game(config.game.clone());
    store.set_events_out(config.events_out.as_ref().map(|o| *o.limits()));
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
        service: Service::new(store.clone(), settings, config.limits.rate)
            .with_review_runs(config.limits.review_runs),
        access,
        allow_origins: config.allow_origins.clone().into(),
        web: viewer.clone(),
        streams,
        health: Arc::default(),
        body_deadline: config.limits.body_deadline,
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
