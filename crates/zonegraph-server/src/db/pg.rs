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
//! Concurrency: each write is one transaction at READ COMMITTED; the races that matter are
//! compare-and-sets on a version column (`UPDATE … WHERE version = $n` re-checks the row
//! after waiting for a concurrent writer) and the unique index on a player's active run, the
//! same contract as on SQLite. Each read is one REPEATABLE READ, READ ONLY transaction, so a
//! command sees its player's rows as of one moment.

use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Transaction};
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, NoTls, Row};
use zonegraph_core::engine::{Character, Run};
use zonegraph_core::zone::Zone;

use super::{
    EdgeRow, Keys, MAX_QUEUED_NOTICES, MetaRow, NodeRow, Notice, RUN_COLUMNS, RunColumns,
    SCHEMA_VERSION, StoredCharacter, StoredRun, Tx, ZoneRows, ZonesAt, keys_json, random_hex,
    values, zone_from_rows, zone_rows,
};

/// The advisory lock key the migrations hold ("zonegraph" in ASCII, cut to 63 bits): every
/// instance that starts takes it before reading the schema version, so each migration runs
/// once however many start together.
const MIGRATION_LOCK: i64 = 0x7a6f_6e65_6772_6170;

/// Connections per instance: more than the store's concurrent commands rarely help on a
/// small machine, and PostgreSQL's default `max_connections` is 100.
const POOL_SIZE: usize = 16;

/// How long a command waits for a connection, or for a new one to be made, before the
/// database counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The schema version table (SQLite keeps it in `PRAGMA user_version`).
const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS zonegraph_schema (
    id      BIGINT PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
)";

/// Version 1: as SQLite's, in PostgreSQL's types.
const SCHEMA_V1: &str = r#"
CREATE TABLE zone_node (
    node_id        TEXT PRIMARY KEY,
    zone_id        TEXT NOT NULL,
    region_id      TEXT NOT NULL DEFAULT '',
    kind           TEXT NOT NULL,
    label          TEXT NOT NULL DEFAULT '',
    is_entry       BIGINT NOT NULL DEFAULT 0,
    is_boss        BIGINT NOT NULL DEFAULT 0,
    pos_x          BIGINT NOT NULL DEFAULT 0,
    pos_y          BIGINT NOT NULL DEFAULT 0,
    content_json   TEXT NOT NULL DEFAULT '{}',
    seq            BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX idx_zone_node_zone ON zone_node(zone_id);

CREATE TABLE zone_edge (
    edge_id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    zone_id        TEXT NOT NULL,
    from_node      TEXT NOT NULL,
    to_node        TEXT NOT NULL,
    lock_kind      TEXT NOT NULL DEFAULT 'none',
    lock_data_json TEXT NOT NULL DEFAULT '{}',
    hint           TEXT NOT NULL DEFAULT '',
    weight         BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX idx_zone_edge_from ON zone_edge(zone_id, from_node);

CREATE TABLE zone_meta (
    zone_id        TEXT PRIMARY KEY,
    ord            BIGINT NOT NULL,
    name           TEXT NOT NULL,
    tier           BIGINT NOT NULL,
    min_level      BIGINT NOT NULL,
    max_level      BIGINT NOT NULL,
    regions_json   TEXT NOT NULL DEFAULT '[]',
    allow_loops    BIGINT NOT NULL DEFAULT 0,
    legacy         BIGINT NOT NULL DEFAULT 0,
    source_file    TEXT NOT NULL DEFAULT '',
    imported_at_ms BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE player_character (
    user_id        TEXT PRIMARY KEY,
    level          BIGINT NOT NULL DEFAULT 1,
    str            BIGINT NOT NULL DEFAULT 10,
    dex            BIGINT NOT NULL DEFAULT 10,
    con            BIGINT NOT NULL DEFAULT 10,
    int            BIGINT NOT NULL DEFAULT 10,
    wis            BIGINT NOT NULL DEFAULT 10,
    cha            BIGINT NOT NULL DEFAULT 10,
    keys_json      TEXT NOT NULL DEFAULT '[]',
    updated_at_ms  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE zone_notice (
    notice_id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         TEXT NOT NULL,
    run_id          TEXT NOT NULL DEFAULT '',
    text            TEXT NOT NULL,
    html            TEXT NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    delivered_at_ms BIGINT
);
CREATE INDEX idx_zone_notice_user ON zone_notice(user_id, delivered_at_ms);

CREATE TABLE dnd_zone_run (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id        TEXT NOT NULL,
    zone_id        TEXT NOT NULL
);
"#;

/// The run columns (SQLite's list, in PostgreSQL's types) and the run table's indexes: what
/// SQLite's migrations 2 and 4 end with. No legacy table comes to PostgreSQL, so there is
/// nothing to carry over.
fn run_columns_sql() -> String {
    let mut sql = String::new();
    for (name, decl) in RUN_COLUMNS {
        sql.push_str(&format!(
            "ALTER TABLE dnd_zone_run ADD COLUMN IF NOT EXISTS {name} {};\n",
            pg_types(decl)
        ));
    }
    sql.push_str(
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_run_id ON dnd_zone_run(run_id);
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_link ON dnd_zone_run(link_token);
         CREATE INDEX IF NOT EXISTS idx_zone_run_user ON dnd_zone_run(user_id);
         CREATE INDEX IF NOT EXISTS idx_zone_run_fork
           ON dnd_zone_run(fork_created_at_ms) WHERE fork_created_at_ms IS NOT NULL;
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_active
           ON dnd_zone_run(user_id) WHERE outcome = '' AND current_node != '';",
    );
    sql
}

/// SQLite's column types in PostgreSQL's: every `INTEGER` is a `BIGINT` (the rest of the SQL
/// of migrations 3, 5 and 6 means the same on both, so it is written once, in `schema`).
fn pg_types(sql: &str) -> String {
    sql.replace("INTEGER", "BIGINT")
}

/// The migrations, one per SQLite version (the same numbers: version `i + 1` after
/// migration `i`).
fn migrations() -> [String; 6] {
    [
        SCHEMA_V1.to_string(),
        run_columns_sql(),
        pg_types(super::schema::SCHEMA_V3),
        run_columns_sql(),
        pg_types(super::schema::SCHEMA_V5),
        pg_types(super::schema::SCHEMA_V6),
    ]
}

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

/// `url` with its password replaced by `***`, for messages.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((auth, host)) => (Some(auth), host),
        None => (None, rest),
    };
    match auth.map(|a| a.split_once(':')) {
        Some(Some((user, _))) => format!("{scheme}://{user}:***@{host}"),
        Some(None) => format!("{scheme}://{}@{host}", auth.unwrap_or_default()),
        None => format!("{scheme}://{host}"),
    }
}

/// A pool of connections to one PostgreSQL database, and the runtime that drives them.
pub struct Pg {
    /// `Some` until drop (a runtime must not be dropped inside an async context).
    rt: Option<tokio::runtime::Runtime>,
    pool: Pool,
    shown: String,
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
        let config: tokio_postgres::Config = url
            .parse()
            .with_context(|| format!("{shown} is not a PostgreSQL URL"))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zonegraph-pg")
            .enable_all()
            .build()
            .context("cannot start the PostgreSQL driver's runtime")?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .context("cannot make the PostgreSQL pool")?;
        let pg = Pg {
            rt: Some(rt),
            pool,
            shown,
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

    /// Replaces every zone in the tables with `zones`, in one transaction (see
    /// [`super::import_zones`]).
    pub fn import_zones(&self, zones: &[(String, Zone)], now: i64) -> Result<()> {
        let rows = zone_rows(zones)?;
        self.block_on(async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            // Instances importing at once take turns (the tables are replaced whole).
            tx.execute("LOCK TABLE zone_meta IN EXCLUSIVE MODE", &[])
                .await?;
            tx.batch_execute(
                "DELETE FROM zone_edge; DELETE FROM zone_node; DELETE FROM zone_meta;",
            )
            .await?;
            let meta = tx
                .prepare(
                    "INSERT INTO zone_meta (zone_id, ord, name, tier, min_level, max_level,
                       regions_json, allow_loops, legacy, source_file, imported_at_ms)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                )
                .await?;
            let node = tx
                .prepare(
                    "INSERT INTO zone_node (node_id, zone_id, region_id, kind, label, is_entry,
                       is_boss, pos_x, pos_y, content_json)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .await?;
            let edge = tx
                .prepare(
                    "INSERT INTO zone_edge (zone_id, from_node, to_node, lock_kind,
                       lock_data_json, hint, weight) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .await?;
            for ZoneRows {
                meta: m,
                nodes,
                edges,
            } in &rows
            {
                tx.execute(
                    &meta,
                    &[
                        &m.zone_id,
                        &m.ord,
                        &m.name,
                        &m.tier,
                        &m.min_level,
                        &m.max_level,
                        &m.regions_json,
                        &i64::from(m.allow_loops),
                        &i64::from(m.legacy),
                        &m.source_file,
                        &now,
                    ],
                )
                .await?;
                for n in nodes {
                    tx.execute(
                        &node,
                        &[
                            &n.node_id,
                            &m.zone_id,
                            &n.region_id,
                            &n.kind,
                            &n.label,
                            &i64::from(n.is_entry),
                            &i64::from(n.is_boss),
                            &n.pos_x,
                            &n.pos_y,
                            &n.content_json,
                        ],
                    )
                    .await
                    .with_context(|| format!("cannot store room {}", n.node_id))?;
                }
                for e in edges {
                    tx.execute(
                        &edge,
                        &[
                            &m.zone_id,
                            &e.from_node,
                            &e.to_node,
                            &e.lock_kind,
                            &e.lock_data_json,
                            &e.hint,
                            &e.weight,
                        ],
                    )
                    .await?;
                }
            }
            tx.execute("UPDATE zone_version SET version = version + 1", &[])
                .await?;
            tx.commit().await?;
            anyhow::Ok(())
        })
    }

    /// The zones' version: raised by every import, on any instance.
    pub fn zone_version(&self) -> Result<i64> {
        self.block_on(async {
            let client = self.pool.get().await?;
            let version: i64 = client
                .query_one("SELECT version FROM zone_version WHERE id = 1", &[])
                .await?
                .try_get(0)?;
            anyhow::Ok(version)
        })
        .map_err(|e| self.classify(e))
    }

    /// Loads every zone from the tables (see [`super::load_zones`]), with the zone version
    /// they are at and when they were imported (Unix ms).
    pub fn load_zones(&self) -> Result<ZonesAt> {
        let (version, imported_at, rows) = self.block_on(async {
            let mut client = self.pool.get().await?;
            // One snapshot: the version read is the version of the rows loaded.
            let client = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let version: i64 = client
                .query_one("SELECT version FROM zone_version WHERE id = 1", &[])
                .await?
                .try_get(0)?;
            let imported_at: i64 = client
                .query_one(
                    "SELECT COALESCE(max(imported_at_ms), 0) FROM zone_meta",
                    &[],
                )
                .await?
                .try_get(0)?;
            let metas = client
                .query(
                    "SELECT zone_id, ord, name, tier, min_level, max_level, regions_json,
                       allow_loops, legacy, source_file
                     FROM zone_meta ORDER BY ord, zone_id",
                    &[],
                )
                .await?;
            let mut out = Vec::with_capacity(metas.len());
            for r in metas {
                let meta = MetaRow {
                    zone_id: r.try_get(0)?,
                    ord: r.try_get(1)?,
                    name: r.try_get(2)?,
                    tier: r.try_get(3)?,
                    min_level: r.try_get(4)?,
                    max_level: r.try_get(5)?,
                    regions_json: r.try_get(6)?,
                    allow_loops: r.try_get::<_, i64>(7)? != 0,
                    legacy: r.try_get::<_, i64>(8)? != 0,
                    source_file: r.try_get(9)?,
                };
                let nodes = client
                    .query(
                        "SELECT node_id, region_id, kind, label, is_entry, is_boss, pos_x, pos_y,
                           content_json
                         FROM zone_node WHERE zone_id = $1 ORDER BY seq",
                        &[&meta.zone_id],
                    )
                    .await?
                    .iter()
                    .map(|r| {
                        Ok(NodeRow {
                            node_id: r.try_get(0)?,
                            region_id: r.try_get(1)?,
                            kind: r.try_get(2)?,
                            label: r.try_get(3)?,
                            is_entry: r.try_get::<_, i64>(4)? != 0,
                            is_boss: r.try_get::<_, i64>(5)? != 0,
                            pos_x: r.try_get(6)?,
                            pos_y: r.try_get(7)?,
                            content_json: r.try_get(8)?,
                        })
                    })
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()?;
                let edges = client
                    .query(
                        "SELECT from_node, to_node, lock_kind, lock_data_json, hint, weight
                         FROM zone_edge WHERE zone_id = $1 ORDER BY edge_id",
                        &[&meta.zone_id],
                    )
                    .await?
                    .iter()
                    .map(|r| {
                        Ok(EdgeRow {
                            from_node: r.try_get(0)?,
                            to_node: r.try_get(1)?,
                            lock_kind: r.try_get(2)?,
                            lock_data_json: r.try_get(3)?,
                            hint: r.try_get(4)?,
                            weight: r.try_get(5)?,
                        })
                    })
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()?;
                out.push(ZoneRows { meta, nodes, edges });
            }
            client.rollback().await?;
            anyhow::Ok((version, imported_at, out))
        })?;
        let zones = rows
            .into_iter()
            .map(zone_from_rows)
            .collect::<Result<_>>()?;
        Ok(ZonesAt {
            version,
            imported_at,
            zones,
        })
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
    pub fn read<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T> {
        let mut client = self
            .block_on(self.pool.get())
            .map_err(|e| self.classify(e.into()))?;
        let tx = self
            .block_on(
                client
                    .build_transaction()
                    .isolation_level(IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start(),
            )
            .map_err(|e| self.classify(e.into()))?;
        let out = f(&mut PgTx { pg: self, tx: &tx }).map_err(|e| self.classify(e));
        // Nothing to keep: a read-only transaction ends the same either way.
        let _ = self.block_on(tx.rollback());
        out
    }

    /// Runs `work` in one transaction, committed when `keep` says so of its result (its
    /// compare-and-sets held), else rolled back; a failed commit is the caller's error.
    pub fn write<T>(
        &self,
        work: impl FnOnce(&mut dyn Tx) -> Result<T>,
        keep: impl FnOnce(&T) -> bool,
    ) -> Result<T> {
        let mut client = self
            .block_on(self.pool.get())
            .map_err(|e| self.classify(e.into()))?;
        let tx = self
            .block_on(client.transaction())
            .map_err(|e| self.classify(e.into()))?;
        let out = work(&mut PgTx { pg: self, tx: &tx }).map_err(|e| self.classify(e))?;
        if keep(&out) {
            self.block_on(tx.commit())
                .map_err(|e| self.classify(anyhow::Error::new(e).context("cannot commit")))?;
        } else {
            self.block_on(tx.rollback())
                .map_err(|e| self.classify(anyhow::Error::new(e).context("cannot roll back")))?;
        }
        Ok(out)
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

/// [`Tx`] in one PostgreSQL transaction.
struct PgTx<'t, 'c> {
    pg: &'t Pg,
    tx: &'t Transaction<'c>,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

impl PgTx<'_, '_> {
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        self.pg.block_on(async {
            let st = self.tx.prepare_cached(sql).await?;
            Ok(self.tx.query(&st, params).await?)
        })
    }

    fn query_opt(&self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        let mut rows = self.query(sql, params)?;
        if rows.len() > 1 {
            bail!("more than one row where one was expected");
        }
        Ok(rows.pop())
    }

    fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        self.pg.block_on(async {
            let st = self.tx.prepare_cached(sql).await?;
            Ok(self.tx.execute(&st, params).await?)
        })
    }

    fn runs(&self, filter: &str, params: Params<'_>) -> Result<Vec<StoredRun>> {
        let sql = format!("{RUN_SELECT_PG} {filter}");
        self.query(&sql, params)?
            .iter()
            .map(|r| Ok(run_columns(r)?.decode()?))
            .collect()
    }
}

/// The columns [`run_columns`] reads, in order (SQLite's `RUN_SELECT`, keyed by `id`).
const RUN_SELECT_PG: &str = "SELECT id, user_id, version, link_token, run_id, zone_id,
    current_node, visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
    revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, boss_defeated,
    abandoned, outcome, missed_passages FROM dnd_zone_run";

fn run_columns(r: &Row) -> Result<RunColumns, tokio_postgres::Error> {
    Ok(RunColumns {
        id: r.try_get(0)?,
        user_id: r.try_get(1)?,
        version: r.try_get(2)?,
        link_token: r.try_get(3)?,
        run_id: r.try_get(4)?,
        zone_id: r.try_get(5)?,
        current_node: r.try_get(6)?,
        visited_nodes: r.try_get(7)?,
        node_choices: r.try_get(8)?,
        cleared_regions: r.try_get(9)?,
        harvested_nodes: r.try_get(10)?,
        keys_granted: r.try_get(11)?,
        revealed_secrets: r.try_get(12)?,
        started_at_ms: r.try_get(13)?,
        last_action_at_ms: r.try_get(14)?,
        completed_at_ms: r.try_get(15)?,
        boss_defeated: r.try_get::<_, i64>(16)? != 0,
        abandoned: r.try_get::<_, i64>(17)? != 0,
        outcome: r.try_get(18)?,
        missed_passages: r.try_get(19)?,
    })
}

impl Tx for PgTx<'_, '_> {
    fn character(&mut self, user: &str) -> Result<Option<StoredCharacter>> {
        let Some(r) = self.query_opt(
            "SELECT level, str, dex, con, int, wis, cha, keys_json, version
             FROM player_character WHERE user_id = $1",
            &[&user],
        )?
        else {
            return Ok(None);
        };
        let mut scores = [10; 6];
        for (i, s) in scores.iter_mut().enumerate() {
            *s = i32::try_from(r.try_get::<_, i64>(1 + i)?)?;
        }
        let Keys { keys, xp } = serde_json::from_str(&r.try_get::<_, String>(7)?)
            .with_context(|| format!("bad keys_json of {user}"))?;
        Ok(Some(StoredCharacter {
            character: Character {
                level: u32::try_from(r.try_get::<_, i64>(0)?)?,
                scores,
                keys,
                xp,
            },
            version: r.try_get(8)?,
        }))
    }

    fn put_character_cas(
        &mut self,
        user: &str,
        c: &Character,
        version: Option<i64>,
        now: i64,
    ) -> Result<bool> {
        let s = c.scores.map(i64::from);
        let keys = keys_json(c)?;
        let level = i64::from(c.level);
        let n = match version {
            None => self.execute(
                "INSERT INTO player_character (user_id, level, str, dex, con, int, wis, cha,
                   keys_json, updated_at_ms, version)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0)
                 ON CONFLICT (user_id) DO NOTHING",
                &[
                    &user, &level, &s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &keys, &now,
                ],
            )?,
            Some(v) => self.execute(
                "UPDATE player_character SET level = $2, str = $3, dex = $4, con = $5,
                   int = $6, wis = $7, cha = $8, keys_json = $9, updated_at_ms = $10,
                   version = version + 1
                 WHERE user_id = $1 AND version = $11",
                &[
                    &user, &level, &s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &keys, &now, &v,
                ],
            )?,
        };
        Ok(n == 1)
    }

    fn player_run(&mut self, user: &str) -> Result<Option<StoredRun>> {
        Ok(self
            .runs(
                "WHERE user_id = $1 AND current_node != ''
                 ORDER BY (outcome = '') DESC, id DESC LIMIT 1",
                &[&user],
            )?
            .pop())
    }

    fn run_by_token(&mut self, token: &str) -> Result<Option<StoredRun>> {
        Ok(self.runs("WHERE link_token = $1", &[&token])?.pop())
    }

    fn all_runs(&mut self) -> Result<Vec<StoredRun>> {
        self.runs("WHERE current_node != '' ORDER BY id", &[])
    }

    fn insert_run(&mut self, user: &str, run: &Run) -> Result<Option<StoredRun>> {
        let v = values(run)?;
        let token = random_hex()?;
        let (over, boss, abandoned) = (
            i64::from(run.is_over()),
            i64::from(run.boss_defeated),
            i64::from(run.abandoned),
        );
        // The unique index on a player's active run decides a race: the loser inserts
        // nothing (and the transaction stays usable).
        let row = self.query_opt(
            "INSERT INTO dnd_zone_run (user_id, zone_id, run_id, link_token, current_node,
               visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
               revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, completed,
               boss_defeated, abandoned, outcome, fork_created_at_ms, missed_passages, version)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
               $18, $19, $20, 0)
             ON CONFLICT (user_id) WHERE outcome = '' AND current_node != '' DO NOTHING
             RETURNING id",
            &[
                &user,
                &run.zone_id,
                &run.run_id,
                &token,
                &v.current_node,
                &v.visited,
                &v.choices,
                &v.cleared,
                &v.harvested,
                &v.keys,
                &v.revealed,
                &run.started_at,
                &run.last_action_at,
                &run.completed_at,
                &over,
                &boss,
                &abandoned,
                &v.outcome,
                &v.fork_created,
                &v.missed,
            ],
        )?;
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(StoredRun {
            id: row.try_get(0)?,
            user_id: user.to_string(),
            version: 0,
            link_token: token,
            run: run.clone(),
        }))
    }

    fn update_run_cas(&mut self, id: i64, version: i64, run: &Run) -> Result<bool> {
        let v = values(run)?;
        let (over, boss, abandoned) = (
            i64::from(run.is_over()),
            i64::from(run.boss_defeated),
            i64::from(run.abandoned),
        );
        let n = self.execute(
            "UPDATE dnd_zone_run SET current_node = $3, visited_nodes = $4, node_choices = $5,
               cleared_regions = $6, harvested_nodes = $7, keys_granted = $8,
               revealed_secrets = $9, last_action_at_ms = $10, completed_at_ms = $11,
               completed = $12, boss_defeated = $13, abandoned = $14, outcome = $15,
               fork_created_at_ms = $16, missed_passages = $17, version = version + 1
             WHERE id = $1 AND version = $2",
            &[
                &id,
                &version,
                &v.current_node,
                &v.visited,
                &v.choices,
                &v.cleared,
                &v.harvested,
                &v.keys,
                &v.revealed,
                &run.last_action_at,
                &run.completed_at,
                &over,
                &boss,
                &abandoned,
                &v.outcome,
                &v.fork_created,
                &v.missed,
            ],
        )?;
        Ok(n == 1)
    }

    fn users_with_forks_due(&mut self, due: i64) -> Result<Vec<String>> {
        self.query(
            "SELECT DISTINCT user_id FROM dnd_zone_run
             WHERE fork_created_at_ms IS NOT NULL AND fork_created_at_ms <= $1 AND outcome = ''
             ORDER BY user_id",
            &[&due],
        )?
        .iter()
        .map(|r| Ok(r.try_get(0)?))
        .collect()
    }

    fn push_notice(
        &mut self,
        user: &str,
        run_id: &str,
        text: &str,
        html: &str,
        now: i64,
    ) -> Result<()> {
        self.execute(
            "INSERT INTO zone_notice (user_id, run_id, text, html, created_at_ms)
             VALUES ($1, $2, $3, $4, $5)",
            &[&user, &run_id, &text, &html, &now],
        )?;
        let queued: i64 = self
            .query(
                "SELECT count(*) FROM zone_notice WHERE user_id = $1 AND delivered_at_ms IS NULL",
                &[&user],
            )?
            .first()
            .map_or(Ok(0), |r| r.try_get(0))?;
        let excess = queued - MAX_QUEUED_NOTICES;
        if excess <= 0 {
            return Ok(());
        }
        let dropped: Vec<(i64, i64)> = self
            .query(
                "SELECT notice_id, dropped_before FROM zone_notice
                 WHERE user_id = $1 AND delivered_at_ms IS NULL ORDER BY notice_id LIMIT $2",
                &[&user, &excess],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, tokio_postgres::Error>>()?;
        let count: i64 = dropped.iter().map(|(_, before)| 1 + before).sum();
        for (id, _) in &dropped {
            self.execute("DELETE FROM zone_notice WHERE notice_id = $1", &[id])?;
        }
        self.execute(
            "UPDATE zone_notice SET dropped_before = dropped_before + $2 WHERE notice_id =
               (SELECT min(notice_id) FROM zone_notice
                WHERE user_id = $1 AND delivered_at_ms IS NULL)",
            &[&user, &count],
        )?;
        Ok(())
    }

    fn users_with_notices(&mut self) -> Result<Vec<String>> {
        self.query(
            "SELECT DISTINCT user_id FROM zone_notice WHERE delivered_at_ms IS NULL
             ORDER BY user_id",
            &[],
        )?
        .iter()
        .map(|r| Ok(r.try_get(0)?))
        .collect()
    }

    fn queued_notices(&mut self, user: &str) -> Result<Vec<Notice>> {
        self.query(
            "SELECT notice_id, text, html, created_at_ms, dropped_before FROM zone_notice
             WHERE user_id = $1 AND delivered_at_ms IS NULL ORDER BY notice_id",
            &[&user],
        )?
        .iter()
        .map(|r| {
            Ok(Notice {
                id: r.try_get(0)?,
                text: r.try_get(1)?,
                html: r.try_get(2)?,
                created_at_ms: r.try_get(3)?,
                dropped_before: r.try_get(4)?,
            })
        })
        .collect()
    }

    fn ack_notices(&mut self, user: &str, ids: &[i64], now: i64) -> Result<usize> {
        let mut n = 0;
        for id in ids {
            n += self.execute(
                "UPDATE zone_notice SET delivered_at_ms = $3
                 WHERE user_id = $1 AND notice_id = $2 AND delivered_at_ms IS NULL",
                &[&user, id, &now],
            )?;
        }
        Ok(usize::try_from(n)?)
    }

    fn claim_event(&mut self, event_id: &str, room_id: &str, now: i64) -> Result<bool> {
        let added = self.execute(
            "INSERT INTO matrix_event (event_id, room_id, handled_at_ms) VALUES ($1, $2, $3)
             ON CONFLICT (event_id) DO NOTHING",
            &[&event_id, &room_id, &now],
        )?;
        Ok(added == 1)
    }

    fn prune_events(&mut self, before: i64) -> Result<usize> {
        let n = self.execute(
            "DELETE FROM matrix_event WHERE handled_at_ms < $1",
            &[&before],
        )?;
        Ok(usize::try_from(n)?)
    }

    fn dm_room(&mut self, user: &str) -> Result<Option<String>> {
        self.query_opt("SELECT room_id FROM matrix_dm WHERE user_id = $1", &[&user])?
            .map(|r| Ok(r.try_get(0)?))
            .transpose()
    }

    fn set_dm_room(&mut self, user: &str, room: &str, now: i64) -> Result<()> {
        self.execute(
            "INSERT INTO matrix_dm (user_id, room_id, updated_at_ms) VALUES ($1, $2, $3)
             ON CONFLICT (user_id) DO UPDATE SET room_id = excluded.room_id,
               updated_at_ms = excluded.updated_at_ms
             WHERE matrix_dm.room_id != excluded.room_id",
            &[&user, &room, &now],
        )?;
        Ok(())
    }

    fn forget_dm_room(&mut self, user: &str, room: &str) -> Result<()> {
        self.execute(
            "DELETE FROM matrix_dm WHERE user_id = $1 AND room_id = $2",
            &[&user, &room],
        )?;
        Ok(())
    }

    fn health_write(&mut self, now: i64) -> Result<()> {
        self.execute(
            "INSERT INTO server_health (id, checked_at_ms) VALUES (1, $1)
             ON CONFLICT (id) DO UPDATE SET checked_at_ms = excluded.checked_at_ms",
            &[&now],
        )?;
        Ok(())
    }
}
