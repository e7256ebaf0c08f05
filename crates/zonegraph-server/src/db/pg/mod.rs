//! PostgreSQL (`--db postgres://…`): the same tables, columns and versioned migrations as the
//! SQLite file, for several `zonegraph serve` instances sharing one database.
//!
//! The store is synchronous (it runs on blocking threads; see `crate::store`), the driver
//! async: [`Pg`] owns a small tokio runtime of its own for tokio-postgres and the
//! deadpool-postgres pool and blocks on it, so no call may come from inside an async task.
//!
//! Types: every SQLite `INTEGER` column is `BIGINT` here (flags stay 0/1, as in gogobee's
//! table), `TEXT` stays `TEXT` (JSON columns hold the same text), and an `AUTOINCREMENT` key
//! is an identity column. Rows that must come back in insertion order (`zone_node`: SQLite's
//! `rowid`) have an identity column `seq`.
//!
//! Concurrency: a command is one REPEATABLE READ transaction (`Pg::read_then_write`): it
//! reads its player's rows as of one moment and writes them back as compare-and-sets on a
//! version column; a row another writer changed meanwhile fails the compare-and-set (or the
//! snapshot: a serialization failure) and the command is computed again. Other writes are
//! one transaction at READ COMMITTED, reads one REPEATABLE READ, READ ONLY transaction. The
//! unique index on a player's active run refuses a second one (`ON CONFLICT DO NOTHING`):
//! the same contract as on SQLite.
//!
//! Round trips: statements a transaction sends together are pipelined (see `PgConn`), so a
//! command costs three: its reads with the BEGIN, its writes, the commit.
//!
//! `schema` holds the DDL and the migrations; `conn` one transaction as the statements see it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Transaction};
use tokio_postgres::error::SqlState;

mod conn;
mod schema;

use super::{LegacyColumns, SCHEMA_VERSION, Tx};
use conn::PgConn;
use schema::{MIGRATION_LOCK, VERSION_TABLE, migrations};

/// Connections per instance: more than the store's concurrent commands rarely help on a
/// small machine, and PostgreSQL's default `max_connections` is 100.
const POOL_SIZE: usize = 16;

/// Connections of the anonymous reads' pool (run pages and their streams).
const PUBLIC_POOL_SIZE: usize = 4;

/// How long a command waits for a connection, or for a new one to be made, before the
/// database counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How each kind of transaction begins: reads see one snapshot and write nothing, writes are
/// at READ COMMITTED (their compare-and-sets re-check the row), a read-modify-write reads
/// and writes in one snapshot.
const READ_ONLY: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
const READ_WRITE: &str = "BEGIN";
const SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ";

/// How soon after a change [`Pg::played`] tells the other instances: the changes of those
/// milliseconds go in one notification.
const TELL_WITHIN: Duration = Duration::from_millis(5);

/// The notification channel of [`NOTIFY_TRIGGERS`].
pub const CHANNEL: &str = "zonegraph";

/// The database could not be reached (down, restarting, or the connection dropped during
/// the transaction, which PostgreSQL then rolls back): nothing was written, try again. The
/// HTTP API answers it with 503.
#[derive(Debug)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// Whether `e` says the database is out of reach rather than that the request was wrong.
/// Whether `e` is PostgreSQL's refusal to write a row changed since the transaction's
/// snapshot (a REPEATABLE READ transaction lost a race).
fn is_serialization_failure(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<tokio_postgres::Error>()
            .and_then(tokio_postgres::Error::code)
            == Some(&SqlState::T_R_SERIALIZATION_FAILURE)
    })
}

pub fn is_unavailable(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<Unavailable>().is_some()
            || c.downcast_ref::<tokio_postgres::Error>().is_some_and(|pe| {
                pe.is_closed()
                    || std::error::Error::source(pe).is_some_and(|s| s.is::<std::io::Error>())
                    || pe.code().is_some_and(|c| {
                        // The server is shutting down, or not taking connections yet.
                        c.code().starts_with("57P") || c.code().starts_with("08")
                    })
            })
            || c.downcast_ref::<deadpool_postgres::PoolError>().is_some()
    })
}

/// Where `url` points, for messages: `postgres://user@host:port/database`, read as the driver
/// reads it, and nothing else of it (no password, wherever it stands and whatever it holds,
/// no option). A URL the driver cannot read is not shown at all.
pub fn redacted(url: &str) -> String {
    let config = super::tls::split(url)
        .ok()
        .and_then(|(plain, _)| plain.parse::<tokio_postgres::Config>().ok());
    let Some(c) = config else {
        return "postgres://… (unreadable, not shown)".to_string();
    };
    let mut out = String::from("postgres://");
    if let Some(user) = c.get_user() {
        out.push_str(user);
        out.push('@');
    }
    let ports = c.get_ports();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                tokio_postgres::config::Host::Tcp(name) if name.contains(':') => {
                    format!("[{name}]")
                }
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            };
            match ports.get(i).or(ports.first()) {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        })
        .collect();
    out.push_str(&hosts.join(","));
    if let Some(db) = c.get_dbname() {
        out.push('/');
        out.push_str(db);
    }
    out
}

/// A pool of connections to one PostgreSQL database, and the runtime that drives them.
pub struct Pg {
    /// `Some` until drop (a runtime must not be dropped inside an async context).
    rt: Option<tokio::runtime::Runtime>,
    pool: Pool,
    /// The anonymous reads' own pool ([`PUBLIC_POOL_SIZE`]): a flood of run pages waits
    /// there, not in the players' pool.
    public: Pool,
    /// Where it is, for the listener's connection of its own, and how TLS is made.
    config: tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    shown: String,
    /// See [`Pg::round_trips`].
    round_trips: AtomicU64,
    prepares: AtomicU64,
    /// A notification of [`Pg::played`] is on its way.
    telling: std::sync::Arc<AtomicBool>,
}

impl std::fmt::Debug for Pg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Postgres({})", self.shown)
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl Pg {
    /// Connects to `url` (a `postgres://` URL) and checks that the database answers.
    pub fn connect(url: &str) -> Result<Pg> {
        let shown = redacted(url);
        let authority = url
            .split_once("://")
            .map_or("", |(_, rest)| rest.split(['/', '?']).next().unwrap_or(""));
        if authority.matches('@').count() > 1 {
            bail!(
                "{shown}: the user or password holds an '@': write it as %40 (percent-encoded) \
                 in the URL"
            );
        }
        let (plain, tls) = super::tls::split(url).with_context(|| shown.clone())?;
        let mut config: tokio_postgres::Config = plain
            .parse()
            .with_context(|| format!("{shown} is not a PostgreSQL URL"))?;
        if let Some(warning) = super::tls::unchecked_warning(&config, &tls) {
            tracing::warn!(database = %shown, "{warning}");
        }
        config.ssl_mode(tls.mode.negotiated());
        let tls = super::tls::connector(&tls).with_context(|| shown.clone())?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zonegraph-pg")
            .enable_all()
            .build()
            .context("cannot start the PostgreSQL driver's runtime")?;
        let pool_of = |size: usize| {
            let manager = Manager::from_config(
                config.clone(),
                tls.clone(),
                ManagerConfig {
                    recycling_method: RecyclingMethod::Fast,
                },
            );
            Pool::builder(manager)
                .max_size(size)
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .wait_timeout(Some(CONNECT_TIMEOUT))
                .create_timeout(Some(CONNECT_TIMEOUT))
                .build()
                .context("cannot make the PostgreSQL pool")
        };
        let pool = pool_of(POOL_SIZE)?;
        let public = pool_of(PUBLIC_POOL_SIZE)?;
        let pg = Pg {
            rt: Some(rt),
            pool,
            public,
            config,
            tls,
            shown,
            round_trips: AtomicU64::new(0),
            prepares: AtomicU64::new(0),
            telling: std::sync::Arc::default(),
        };
        pg.block_on(async {
            let client = pg.pool.get().await?;
            client.simple_query("SELECT 1").await?;
            anyhow::Ok(())
        })
        .with_context(|| format!("cannot reach the database at {}", pg.shown))?;
        Ok(pg)
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        match &self.rt {
            Some(rt) => rt.block_on(f),
            // Only during drop, when nothing calls in any more.
            None => unreachable!("the PostgreSQL runtime is gone"),
        }
    }

    /// Runs every pending migration in one transaction that holds [`MIGRATION_LOCK`]: the
    /// instances that start together wait for the first, then find the version raised. A
    /// database written by a newer zonegraph is refused.
    pub fn migrate(&self) -> Result<()> {
        self.block_on(async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            tx.batch_execute(VERSION_TABLE).await?;
            let version: i64 = tx
                .query_opt("SELECT version FROM zonegraph_schema WHERE id = 1", &[])
                .await?
                .map_or(0, |r| r.get(0));
            if version > SCHEMA_VERSION {
                bail!(
                    "the database is at schema version {version}, newer than this zonegraph \
                     knows ({SCHEMA_VERSION}); upgrade zonegraph instead"
                );
            }
            let all = migrations();
            for (i, sql) in all.iter().enumerate().skip(usize::try_from(version)?) {
                tx.batch_execute(sql)
                    .await
                    .with_context(|| format!("cannot migrate to schema version {}", i + 1))?;
            }
            tx.execute(
                "INSERT INTO zonegraph_schema (id, version) VALUES (1, $1)
                 ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                &[&SCHEMA_VERSION],
            )
            .await?;
            tx.commit().await?;
            anyhow::Ok(())
        })
        .with_context(|| format!("cannot migrate the database at {}", self.shown))
    }

    /// The schema version the database is at (0: none yet).
    pub fn schema_version(&self) -> Result<i64> {
        self.block_on(async {
            let client = self.pool.get().await?;
            let exists: bool = client
                .query_one("SELECT to_regclass('zonegraph_schema') IS NOT NULL", &[])
                .await?
                .get(0);
            if !exists {
                return Ok(0);
            }
            Ok(client
                .query_opt("SELECT version FROM zonegraph_schema WHERE id = 1", &[])
                .await?
                .map_or(0, |r| r.get(0)))
        })
    }

    /// Listens on [`CHANNEL`] on a connection of its own, reconnecting when it drops: each
    /// notification, and each (re)connection (what happened while it was away is caught up
    /// by the listener's next poll), is a wake-up on the channel returned.
    pub fn listen(&self) -> (std::sync::mpsc::Receiver<()>, tokio::task::AbortHandle) {
        use futures_util::StreamExt as _;
        let (wake, woken) = std::sync::mpsc::channel::<()>();
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let shown = self.shown.clone();
        let task = async move {
            let mut told = false;
            loop {
                match config.connect(tls.clone()).await {
                    Ok((client, mut connection)) => {
                        let w = wake.clone();
                        let mut messages =
                            futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                        let forward = tokio::spawn(async move {
                            while let Some(Ok(m)) = messages.next().await {
                                if let tokio_postgres::AsyncMessage::Notification(_) = m
                                    && w.send(()).is_err()
                                {
                                    return;
                                }
                            }
                        });
                        match client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
                            Ok(()) => {
                                told = false;
                                if wake.send(()).is_err() {
                                    return;
                                }
                                let _ = forward.await;
                            }
                            Err(e) => {
                                forward.abort();
                                if !told {
                                    tracing::warn!(
                                        database = %shown,
                                        error = %e,
                                        "cannot LISTEN; polling"
                                    );
                                    told = true;
                                }
                            }
                        }
                    }
                    Err(e) if !told => {
                        tracing::warn!(database = %shown, error = %e, "cannot LISTEN; polling");
                        told = true;
                    }
                    Err(_) => {}
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        };
        let handle = match &self.rt {
            Some(rt) => rt.spawn(task).abort_handle(),
            None => unreachable!("the PostgreSQL runtime is gone"),
        };
        (woken, handle)
    }

    /// Takes the session-level advisory lock `key` on a connection of its own and keeps both
    /// (see [`Held`]); `None` when another session holds it.
    pub fn try_hold(&self, key: i64) -> Result<Option<Held>> {
        self.block_on(async {
            let client = self.pool.get().await?;
            let got: bool = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                .await?
                .try_get(0)?;
            anyhow::Ok(got.then(|| Held {
                client: Some(deadpool_postgres::Object::take(client)),
            }))
        })
        .map_err(|e| self.classify(e))
    }

    /// Whether `held` still holds its lock: its connection is open and answers.
    pub fn still_holds(&self, held: &Held) -> bool {
        let Some(client) = &held.client else {
            return false;
        };
        !client.is_closed()
            && self.block_on(async {
                // Made inside the runtime: the timer needs it.
                tokio::time::timeout(CONNECT_TIMEOUT, client.simple_query("SELECT 1"))
                    .await
                    .is_ok_and(|r| r.is_ok())
            })
    }

    /// Runs `f` in one transaction of its own, committed when it returns `Ok` (for bulk work
    /// like `zonegraph migrate --to`, outside the store's [`Tx`]).
    pub fn with_transaction<T>(
        &self,
        f: impl AsyncFnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        self.block_on(async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let out = f(&tx).await?;
            tx.commit().await?;
            Ok(out)
        })
        .map_err(|e| self.classify(e))
    }

    /// Runs `f` in one REPEATABLE READ, READ ONLY transaction.
    pub fn read<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        self.read_on(&self.pool, f)
    }

    /// [`Pg::read`] on the anonymous reads' own pool.
    pub fn read_public<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        self.read_on(&self.public, f)
    }

    fn read_on<T>(&self, pool: &Pool, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let client = self.client_of(pool)?;
        let conn = PgConn::new(self, &client, READ_ONLY);
        // Nothing to keep: the transaction is rolled back as `conn` goes, unawaited.
        f(&mut Tx::new(&conn, LegacyColumns::default())).map_err(|e| self.classify(e))
    }

    /// Runs `work` in one transaction, committed when `keep` says so of its result (its
    /// compare-and-sets held), else rolled back; a failed commit is the caller's error.
    pub fn write<T>(
        &self,
        work: impl FnOnce(&mut Tx<'_>) -> Result<T>,
        keep: impl FnOnce(&T) -> bool,
    ) -> Result<T> {
        let client = self.client_of(&self.pool)?;
        let conn = PgConn::new(self, &client, READ_WRITE);
        let out =
            work(&mut Tx::new(&conn, LegacyColumns::default())).map_err(|e| self.classify(e))?;
        if keep(&out) {
            conn.commit().map_err(|e| self.classify(e))?;
        }
        Ok(out)
    }

    /// One read-modify-write in one REPEATABLE READ transaction: `read` reads (its statements
    /// sent together) and says what it wants written; the write's compare-and-sets go in one
    /// more round trip and the commit in a third. A row another writer changed since the
    /// read's snapshot is a lost race (`Some(false)`), as a compare-and-set that found a newer
    /// version is. `None`: nothing was to be written.
    pub fn read_then_write<T>(
        &self,
        read: impl FnOnce(&mut Tx<'_>) -> Result<super::Plan<T>>,
    ) -> Result<(T, Option<bool>)> {
        let client = self.client_of(&self.pool)?;
        let conn = PgConn::new(self, &client, SNAPSHOT);
        let mut tx = Tx::new(&conn, LegacyColumns::default());
        let (out, write) = read(&mut tx).map_err(|e| self.classify(e))?;
        let Some(write) = write else {
            return Ok((out, None));
        };
        let held = match write(&mut tx).and_then(|held| {
            if held {
                conn.commit()?;
            }
            Ok(held)
        }) {
            Ok(held) => held,
            Err(e) if is_serialization_failure(&e) => false,
            Err(e) => return Err(self.classify(e)),
        };
        Ok((out, Some(held)))
    }

    /// Tells every instance (LISTEN on [`CHANNEL`]) that a run or a sheet changed: once
    /// within [`TELL_WITHIN`] of the first commit that asks, however many commit meanwhile,
    /// in a transaction of its own that does not wait for the disk (a notification is a
    /// wake-up: one lost to a crash is caught up by polling). Never in the players' own
    /// transactions: PostgreSQL commits a transaction that notified under a lock of the
    /// whole cluster, so those would commit one at a time.
    fn played(&self) {
        if self.telling.swap(true, Ordering::AcqRel) {
            return;
        }
        let (telling, pool) = (self.telling.clone(), self.pool.clone());
        if let Some(rt) = &self.rt {
            rt.spawn(async move {
                tokio::time::sleep(TELL_WITHIN).await;
                telling.store(false, Ordering::Release);
                if let Ok(client) = pool.get().await {
                    let _ = client
                        .batch_execute(&format!(
                            "BEGIN; SET LOCAL synchronous_commit = off;
                             SELECT pg_notify('{CHANNEL}', 'dnd_zone_run'); COMMIT"
                        ))
                        .await;
                }
            });
        }
    }

    /// A connection of `pool`, or why there is none (the database unreachable).
    fn client_of(&self, pool: &Pool) -> Result<deadpool_postgres::Object> {
        self.block_on(pool.get())
            .map_err(|e| self.classify(e.into()))
    }

    /// How many round trips this instance's transactions have waited on so far: each batch
    /// of statements sent together and each commit, and apart from those each statement
    /// prepared (once per connection). What BENCHMARKS counts per command.
    pub fn round_trips(&self) -> super::RoundTrips {
        super::RoundTrips {
            waited: self.round_trips.load(Ordering::Relaxed),
            prepared: self.prepares.load(Ordering::Relaxed),
        }
    }

    fn unreachable(&self) -> String {
        format!("cannot reach the database at {}", self.shown)
    }

    /// `e` as [`Unavailable`] when the database was out of reach.
    fn classify(&self, e: anyhow::Error) -> anyhow::Error {
        if is_unavailable(&e) {
            anyhow::Error::new(Unavailable(format!("{}: {e:#}", self.unreachable())))
        } else {
            e
        }
    }
}

/// A session-level advisory lock and the connection that holds it (taken out of the pool):
/// PostgreSQL releases the lock when that connection ends, so an instance that dies (or
/// loses the database) gives it up by itself. Dropping this ends the connection.
pub struct Held {
    client: Option<deadpool_postgres::ClientWrapper>,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held")
    }
}

/// The advisory lock key of a name (FNV-1a, 63 bits): the same on every instance.
pub fn lock_key(name: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::try_from(h >> 1).unwrap_or(0)
}
