//! [`Database`], the one owner of *which* database: opening and migrating it, transactions
//! (SQLite's group-committing writer thread and its pool of readers, or PostgreSQL's pool),
//! the wake-ups from other instances, the legacy warm-up and the Matrix
//! sync lock. Everything above it (`crate::store`, `zonegraph char`, `serve`) asks it and
//! never names a backend.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use anyhow::{Context as _, Result, bail};
use rusqlite::{Connection, TransactionBehavior};

use super::pg::{self, Pg};
use super::{LegacyColumns, Tx, WarmUp};

/// SQLite read connections open at once (idle ones are kept for the next reads).
const MAX_READERS: usize = 32;

/// Of those, how many the anonymous reads (run pages, their streams) may hold at once, so
/// that they never starve the players' commands.
const MAX_PUBLIC_READS: usize = 8;

/// How long a read waits for a reader before it is refused as busy (503).
const READ_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A bounded count of places (readers, public reads) and its waiters.
#[derive(Debug, Default)]
struct Places {
    used: Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Places {
    /// Takes a place among `max` within [`READ_WAIT`]; `false` when none came free.
    fn take(&self, max: usize) -> bool {
        let deadline = std::time::Instant::now() + READ_WAIT;
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        while *used >= max {
            let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
                return false;
            };
            used = self
                .freed
                .wait_timeout(used, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *used += 1;
        true
    }

    fn give_back(&self) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        *used = used.saturating_sub(1);
        self.freed.notify_one();
    }
}

/// SQLite's read connections: the idle ones, and how many are open in all.
#[derive(Default)]
struct Readers {
    idle: Vec<Connection>,
    open: usize,
}

/// The refusal of a read that found every place taken.
fn busy(what: &str) -> anyhow::Error {
    anyhow::Error::new(super::pg::Unavailable(format!(
        "every {what} is busy (waited {} s)",
        READ_WAIT.as_secs()
    )))
}

/// Most write jobs committed together.
const MAX_BATCH: usize = 64;

/// Whether `s` is a libpq `key=value …` connection string rather than a file or a URL.
pub fn looks_like_conninfo(s: &str) -> bool {
    const KEYS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service",
    ];
    !s.contains("://")
        && s.split_whitespace().any(|word| {
            word.split_once('=')
                .is_some_and(|(k, _)| KEYS.contains(&k.trim().to_ascii_lowercase().as_str()))
        })
}

/// Where the bot's rows live: `--db PATH` (SQLite) or `--db postgres://…`.
#[derive(Clone, PartialEq, Eq)]
pub enum DbAt {
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (it may hold a password: never printed whole).
    Postgres(String),
}

impl DbAt {
    /// `postgres://…` or `postgresql://…` is PostgreSQL; anything else a SQLite file.
    pub fn parse(s: &str) -> DbAt {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            DbAt::Postgres(s.to_string())
        } else {
            DbAt::Sqlite(PathBuf::from(s))
        }
    }

    /// The database's own file, for what is kept beside it (the API token, the Matrix
    /// state); `None` for a server database, which has no file here.
    pub fn file(&self) -> Option<&Path> {
        match self {
            DbAt::Sqlite(p) => Some(p),
            DbAt::Postgres(_) => None,
        }
    }

    /// Whether several instances may share it (and so must take turns for what only one may
    /// do, such as the Matrix sync): PostgreSQL; a SQLite file has one server.
    pub fn is_shared(&self) -> bool {
        matches!(self, DbAt::Postgres(_))
    }
}

impl From<PathBuf> for DbAt {
    fn from(path: PathBuf) -> DbAt {
        DbAt::Sqlite(path)
    }
}

impl std::fmt::Debug for DbAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for DbAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbAt::Sqlite(p) => write!(f, "{}", p.display()),
            DbAt::Postgres(url) => write!(f, "{}", pg::redacted(url)),
        }
    }
}

/// The right to run the Matrix sync for one bot account ([`Database::hold_lock`]); given up
/// when dropped.
#[derive(Debug)]
pub struct HeldLock(Option<pg::Held>);

/// Wake-ups from the database ([`Database::wakeups`]).
#[derive(Debug)]
pub struct Wakeups {
    woken: Option<mpsc::Receiver<()>>,
    task: Option<tokio::task::AbortHandle>,
}

impl Wakeups {
    /// Waits until a wake-up or `timeout`; `true` when woken. Wake-ups that came together
    /// count as one.
    pub fn wait(&self, timeout: std::time::Duration) -> bool {
        let Some(woken) = &self.woken else {
            std::thread::sleep(timeout);
            return false;
        };
        match woken.recv_timeout(timeout) {
            Ok(()) => {
                while woken.try_recv().is_ok() {}
                true
            }
            Err(mpsc::RecvTimeoutError::Timeout) => false,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(timeout);
                false
            }
        }
    }
}

impl Drop for Wakeups {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The database the bot's rows live in, opened and migrated.
pub struct Database {
    backend: Backend,
}

enum Backend {
    /// One SQLite file: one writer thread that group-commits, and a pool of readers.
    Sqlite {
        path: PathBuf,
        /// The writer thread's queue: it owns the one connection that writes.
        writer: Mutex<mpsc::Sender<WriteJob>>,
        /// The read connections (WAL readers run beside the writer), at most
        /// [`MAX_READERS`] open.
        readers: Mutex<Readers>,
        /// Told when a reader is put back.
        reader_back: std::sync::Condvar,
        /// Anonymous reads under way (at most [`MAX_PUBLIC_READS`]).
        public_reads: Places,
        legacy: LegacyColumns,
    },
    /// PostgreSQL: a pool of connections, each write its own transaction.
    Postgres(Box<Pg>),
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Backend::Sqlite { path, .. } => write!(f, "Sqlite({})", path.display()),
            Backend::Postgres(pg) => write!(f, "{pg:?}"),
        }
    }
}

impl Database {
    /// Opens the database (a SQLite file is created when missing) and migrates it. On
    /// PostgreSQL the migrations run under a lock, so instances starting together apply each
    /// once.
    pub fn open(at: &DbAt) -> Result<Database> {
        Database::open_as(at, Upgrade::Migrate)
    }

    /// [`Database::open`], or with [`Upgrade::Refuse`] an error for a database that is not
    /// at this zonegraph's schema (nor there at all) instead of changing it.
    pub fn open_as(at: &DbAt, upgrade: Upgrade) -> Result<Database> {
        if let DbAt::Sqlite(path) = at
            && looks_like_conninfo(&path.to_string_lossy())
        {
            // Not shown: it may hold a password.
            bail!(
                "--db looks like a libpq connection string (key=value …), which would be taken \
                 for a SQLite file name: give a postgres://user@host/dbname URL instead"
            );
        }
        let backend = match at {
            DbAt::Sqlite(path) => {
                if path.is_dir() {
                    bail!(
                        "--db {} is a directory: it names a SQLite file (made at the first \
                         start) or a postgres:// URL",
                        path.display()
                    );
                }
                if upgrade == Upgrade::Refuse {
                    // Looked at read-only: even opening as the store does changes the file
                    // (its journal mode).
                    if !path.is_file() {
                        bail!("{}", not_upgraded(at, None));
                    }
                    let look = Connection::open_with_flags(
                        path,
                        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                    )
                    .with_context(|| format!("cannot open {}", path.display()))?;
                    at_schema(at, super::user_version(&look)?)?;
                }
                let mut conn = super::open(path)?;
                super::migrate(&mut conn)?;
                let legacy = super::legacy_columns(&conn)?;
                Backend::Sqlite {
                    path: path.clone(),
                    writer: Mutex::new(spawn_writer(conn, legacy)?),
                    readers: Mutex::default(),
                    reader_back: std::sync::Condvar::new(),
                    public_reads: Places::default(),
                    legacy,
                }
            }
            DbAt::Postgres(url) => {
                let pg = Pg::connect(url)?;
                match upgrade {
                    Upgrade::Migrate => pg.migrate()?,
                    Upgrade::Refuse => at_schema(at, pg.schema_version()?)?,
                }
                Backend::Postgres(Box::new(pg))
            }
        };
        Ok(Database { backend })
    }

    /// [`Database::open`], refusing a SQLite file that is not there (a tool that edits rows
    /// should not make an empty database at a mistyped path).
    pub fn open_existing(at: &DbAt) -> Result<Database> {
        if let DbAt::Sqlite(path) = at
            && !path.is_file()
        {
            bail!("no database at {}", path.display());
        }
        Database::open(at)
    }

    /// What wakes an instance up to look for changes another made: on PostgreSQL (unless
    /// `listen` is off, behind a pooler where LISTEN does not reach) a notification at each
    /// commit that changed a run, a sheet or the zones; never on SQLite. Polling is the
    /// truth either way ([`Wakeups::wait`] returns at its timeout).
    pub fn wakeups(&self, listen: bool) -> Wakeups {
        match &self.backend {
            Backend::Postgres(pg) if listen => {
                let (woken, task) = pg.listen();
                Wakeups {
                    woken: Some(woken),
                    task: Some(task),
                }
            }
            _ => Wakeups {
                woken: None,
                task: None,
            },
        }
    }

    /// Whether gogobee's linear run columns (`current_room`, `room_seq_json`) are still in
    /// the run table: gogobee may still be serving zones from this database, which zonegraph
    /// cannot share with it both ways (see `crate::store::Opened::warnings`).
    pub fn has_gogobee_run_columns(&self) -> bool {
        match &self.backend {
            Backend::Sqlite { legacy, .. } => legacy.current_room || legacy.room_seq_json,
            Backend::Postgres(_) => false,
        }
    }

    /// Gives legacy runs (gogobee's rows without a graph position) their place in `zones`.
    /// Nothing on PostgreSQL: a gogobee database is SQLite, migrated there first and then
    /// copied over.
    pub fn warm_up_legacy(&self, zones: &[zonegraph_core::zone::Zone], now: i64) -> Result<WarmUp> {
        match &self.backend {
            Backend::Sqlite { path, .. } => {
                let mut conn = super::open(path)?;
                super::warm_up_legacy(&mut conn, zones, now)
            }
            Backend::Postgres(_) => Ok(WarmUp::default()),
        }
    }

    /// Runs `work` in one transaction and waits until it is committed (when `keep` says so
    /// of its result: its compare-and-sets held) or rolled back. On SQLite the writer thread
    /// group-commits it with the other writes waiting (see `spawn_writer`); the result is
    /// returned only after the commit, so a reply never gets ahead of its write.
    pub fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
        keep: impl FnOnce(&T) -> bool + Send + 'static,
    ) -> Result<T> {
        let writer = match &self.backend {
            Backend::Sqlite { writer, .. } => writer,
            Backend::Postgres(pg) => return pg.write(work, keep),
        };
        let (done, wait) = mpsc::sync_channel::<Result<T>>(1);
        let slot: Arc<Mutex<Option<Result<T>>>> = Arc::default();
        let filled = slot.clone();
        let job = WriteJob {
            work: Box::new(move |tx| {
                let out = work(tx);
                let kept = matches!(&out, Ok(v) if keep(v));
                *filled.lock().unwrap_or_else(|p| p.into_inner()) = Some(out);
                kept
            }),
            done: Box::new(move |failed| {
                let out = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                let out = match (failed, out) {
                    (Some(e), _) => Err(e),
                    (None, Some(out)) => out,
                    (None, None) => Err(anyhow::anyhow!("a write job panicked")),
                };
                // The waiting command may have gone (its task was dropped).
                let _ = done.send(out);
            }),
        };
        writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .map_err(|_| anyhow::anyhow!("the database writer has stopped"))?;
        wait.recv()
            .map_err(|_| anyhow::anyhow!("the database writer has stopped"))?
    }

    /// One read-modify-write (a command): `read` reads the rows it needs and says what it
    /// wants written, as compare-and-sets. On PostgreSQL all of it is one REPEATABLE READ
    /// transaction of three round trips (the reads sent together with the BEGIN, the writes
    /// together, the commit); on SQLite the read is on a reader and the write goes to the
    /// writer, whose compare-and-sets catch a change in between. `Some(true)`: written and
    /// committed; `Some(false)`: another writer got there first, nothing was kept (recompute);
    /// `None`: nothing was to be written.
    pub fn read_then_write<T>(
        &self,
        read: impl FnOnce(&mut Tx<'_>) -> Result<Plan<T>>,
    ) -> Result<(T, Option<bool>)> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.read_then_write(read);
        }
        let (out, write) = self.read(read)?;
        let Some(write) = write else {
            return Ok((out, None));
        };
        let held = self.write(write, |held| *held)?;
        Ok((out, Some(held)))
    }

    /// How many round trips to PostgreSQL this instance has waited on (see
    /// `Pg::round_trips`); `None` on SQLite, which has none.
    pub fn round_trips(&self) -> Option<RoundTrips> {
        match &self.backend {
            Backend::Postgres(pg) => Some(pg.round_trips()),
            Backend::Sqlite { .. } => None,
        }
    }

    /// Runs `f` in a read (on SQLite a connection from the pool, beside the writer).
    pub fn read<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let legacy = match &self.backend {
            Backend::Sqlite { legacy, .. } => *legacy,
            Backend::Postgres(pg) => return pg.read(f),
        };
        self.with_reader(|conn| f(&mut Tx::new(conn, legacy)))
    }

    /// [`Database::read`] for what anyone may ask without a token (run pages and their
    /// streams): on its own share of the connections (SQLite: at most [`MAX_PUBLIC_READS`]
    /// of the readers; PostgreSQL: a pool of its own), so that a flood of them waits or is
    /// refused (503) while the players' commands go on.
    pub fn read_public<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let public = match &self.backend {
            Backend::Sqlite { public_reads, .. } => public_reads,
            Backend::Postgres(pg) => return pg.read_public(f),
        };
        if !public.take(MAX_PUBLIC_READS) {
            return Err(busy("public read"));
        }
        let out = self.read(f);
        public.give_back();
        out
    }

    /// `f` on an idle SQLite read connection (opened when there is none and fewer than
    /// [`MAX_READERS`] are open; else it waits for one, up to [`READ_WAIT`]).
    fn with_reader<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let Backend::Sqlite {
            path,
            readers,
            reader_back,
            ..
        } = &self.backend
        else {
            bail!("not a SQLite database");
        };
        let deadline = std::time::Instant::now() + READ_WAIT;
        let mut pool = readers.lock().unwrap_or_else(|p| p.into_inner());
        let conn = loop {
            if let Some(c) = pool.idle.pop() {
                // Not held while `f` runs (nor when the reader is put back).
                drop(pool);
                break c;
            }
            if pool.open < MAX_READERS {
                pool.open += 1;
                drop(pool);
                match super::open(path) {
                    Ok(c) => break c,
                    Err(e) => {
                        readers.lock().unwrap_or_else(|p| p.into_inner()).open -= 1;
                        return Err(e);
                    }
                }
            }
            let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
                return Err(busy("database reader"));
            };
            pool = reader_back
                .wait_timeout(pool, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        let out = f(&conn);
        readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .idle
            .push(conn);
        reader_back.notify_one();
        out
    }

    /// Takes the lock called `name` for this instance: on PostgreSQL an advisory lock only
    /// one instance holds, released when that instance dies or loses the database; `None`
    /// while another holds it. On SQLite (one server per file) it is always granted.
    pub fn hold_lock(&self, name: &str) -> Result<Option<HeldLock>> {
        match &self.backend {
            Backend::Sqlite { .. } => Ok(Some(HeldLock(None))),
            Backend::Postgres(pg) => {
                Ok(pg.try_hold(pg::lock_key(name))?.map(|h| HeldLock(Some(h))))
            }
        }
    }

    /// Whether `lock` is still held (its connection to the database is alive).
    pub fn still_holds(&self, lock: &HeldLock) -> bool {
        match (&self.backend, &lock.0) {
            (Backend::Postgres(pg), Some(held)) => pg.still_holds(held),
            _ => true,
        }
    }
}

/// Whether opening a database may upgrade its schema (`serve --no-migrate`: it may not).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Upgrade {
    /// Run the pending migrations (copying a database zonegraph did not make first).
    #[default]
    Migrate,
    /// Refuse a database not at this zonegraph's schema version, changing nothing.
    Refuse,
}

/// `Ok` when a database at schema `version` is what this zonegraph runs on unchanged.
fn at_schema(at: &DbAt, version: i64) -> Result<()> {
    if version == super::SCHEMA_VERSION {
        return Ok(());
    }
    bail!("{}", not_upgraded(at, Some(version)))
}

/// Why `--no-migrate` refuses the database at `at` (at schema `version`; `None`: no file).
fn not_upgraded(at: &DbAt, version: Option<i64>) -> String {
    let now = match version {
        None => "there is no database there".to_string(),
        Some(0) => "it has no zonegraph schema yet".to_string(),
        Some(v) if v > super::SCHEMA_VERSION => {
            return format!(
                "the database at {at} is at schema version {v}, newer than this zonegraph \
                 knows ({}); upgrade zonegraph instead",
                super::SCHEMA_VERSION
            );
        }
        Some(v) => format!("it is at schema version {v}"),
    };
    format!(
        "--no-migrate: the database at {at} is not at schema version {} ({now}), and \
         --no-migrate does not change it. Upgrade it first with `zonegraph migrate --db …` \
         (it keeps a copy of a database zonegraph did not make), or start without --no-migrate",
        super::SCHEMA_VERSION
    )
}

/// Round trips to PostgreSQL so far (see [`Database::round_trips`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundTrips {
    /// Batches of statements sent together, and commits.
    pub waited: u64,
    /// Statements prepared: once per statement and connection.
    pub prepared: u64,
}

/// The write a [`Database::read_then_write`] asks for: its compare-and-sets, `false` when
/// one found the row changed (then nothing of it is kept).
pub type Write = Box<dyn FnOnce(&mut Tx<'_>) -> Result<bool> + Send>;

/// What the read of a [`Database::read_then_write`] hands back: what it computed, and the
/// write it wants (`None`: nothing to write).
pub type Plan<T> = (T, Option<Write>);

/// A write for the SQLite writer thread: `work` runs it (`true`: keep its writes; its result
/// waits in the job), then `done` is told whether the batch committed (`None`) or why not.
struct WriteJob {
    work: Work,
    done: Box<dyn FnOnce(Option<anyhow::Error>) + Send>,
}

/// A write job's work: `true` keeps its writes.
type Work = Box<dyn FnOnce(&mut Tx<'_>) -> bool + Send>;

/// Starts the writer thread, which owns `conn` (group commit): it takes every job waiting
/// (up to [`MAX_BATCH`]), runs each in its own savepoint of one `BEGIN IMMEDIATE`
/// transaction — a job that fails or loses its compare-and-set is rolled back alone — and
/// commits once. Only after that commit (and its fsync) is any job's result sent, so every
/// reply still waits for its write to be durable; a failed commit fails every job of the
/// batch. Under load, one fsync covers many players' moves; alone, a job commits at once.
fn spawn_writer(mut conn: Connection, legacy: LegacyColumns) -> Result<mpsc::Sender<WriteJob>> {
    let (tx, rx) = mpsc::channel::<WriteJob>();
    std::thread::Builder::new()
        .name("zonegraph-writer".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(job) => batch.push(job),
                        Err(_) => break,
                    }
                }
                run_batch(&mut conn, legacy, batch);
            }
        })
        .context("cannot start the database writer")?;
    Ok(tx)
}

fn run_batch(conn: &mut Connection, legacy: LegacyColumns, batch: Vec<WriteJob>) {
    let mut done = Vec::with_capacity(batch.len());
    let mut tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => {
            // Say why to every job (another process holding the write lock past the busy
            // timeout, a read-only file), not that the writer stopped: it goes on.
            tracing::warn!(error = %e, "cannot start a write transaction");
            for job in batch {
                (job.done)(Some(anyhow::anyhow!(
                    "cannot start a write transaction: {e}"
                )));
            }
            return;
        }
    };
    let committed = (|| -> Result<()> {
        for job in batch {
            let failed = match tx.savepoint() {
                Ok(mut sp) => {
                    // A panicking job must not take the writer (and every later write) down.
                    let keep = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        (job.work)(&mut Tx::new(&*sp, legacy))
                    }))
                    .unwrap_or(false);
                    if keep {
                        sp.commit().err().map(anyhow::Error::from)
                    } else {
                        // Undo this job's writes only; the savepoint is released on drop.
                        sp.set_drop_behavior(rusqlite::DropBehavior::Rollback);
                        None
                    }
                }
                Err(e) => Some(e.into()),
            };
            done.push((job.done, failed));
        }
        tx.commit()?;
        Ok(())
    })();
    for (tell, failed) in done {
        let failed = match &committed {
            Ok(()) => failed,
            Err(e) => Some(anyhow::anyhow!("cannot commit: {e:#}")),
        };
        tell(failed);
    }
    if let Err(e) = committed {
        tracing::warn!(error = %format_args!("{e:#}"), "a write transaction failed");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    /// `n` reads of `db` (public ones when `public`) held open until `release` is dropped;
    /// returns once all of them hold their connection.
    fn hold(
        db: &Arc<Database>,
        n: usize,
        public: bool,
    ) -> (mpsc::Sender<()>, Vec<std::thread::JoinHandle<()>>) {
        let (release, wait) = mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        let held = Arc::new(std::sync::Barrier::new(n + 1));
        let threads = (0..n)
            .map(|_| {
                let (db, wait, held) = (db.clone(), wait.clone(), held.clone());
                std::thread::spawn(move || {
                    let f = |_: &mut Tx<'_>| {
                        held.wait();
                        let _ = wait.lock().unwrap().recv();
                        Ok(())
                    };
                    if public {
                        db.read_public(f).unwrap();
                    } else {
                        db.read(f).unwrap();
                    }
                })
            })
            .collect();
        held.wait();
        (release, threads)
    }

    #[test]
    fn readers_are_bounded_and_anonymous_reads_never_take_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Database::open(&DbAt::Sqlite(dir.path().join("z.db"))).unwrap());
        // Anonymous reads: past their share they are refused as busy, and a player's read
        // still gets a connection at once.
        let (release, threads) = hold(&db, MAX_PUBLIC_READS, true);
        let refused = db.read_public(|_| Ok(())).unwrap_err();
        assert!(super::super::is_unavailable(&refused), "{refused:#}");
        let started = std::time::Instant::now();
        db.read(|_| Ok(())).unwrap();
        assert!(started.elapsed() < READ_WAIT, "a command's read waited");
        drop(release);
        for t in threads {
            t.join().unwrap();
        }
        // Readers: never more than MAX_READERS open; one more waits, then is refused.
        let (release, threads) = hold(&db, MAX_READERS, false);
        let Backend::Sqlite { readers, .. } = &db.backend else {
            unreachable!()
        };
        assert_eq!(readers.lock().unwrap().open, MAX_READERS);
        let refused = db.read(|_| Ok(())).unwrap_err();
        assert!(super::super::is_unavailable(&refused), "{refused:#}");
        // A reader put back is taken by a waiting read.
        let db2 = db.clone();
        let waiting = std::thread::spawn(move || db2.read(|_| Ok(())));
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(release);
        waiting.join().unwrap().unwrap();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(readers.lock().unwrap().open, MAX_READERS);
    }
}
