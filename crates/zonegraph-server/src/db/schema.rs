//! The schema, its versioned migrations and the connection settings (see `crate::db`).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result};
use rusqlite::{Connection, Transaction, TransactionBehavior, params};

/// `zone_node` and `zone_edge` exactly as the seed defines them (gogobee creates both, empty,
/// with IF NOT EXISTS: so do we), zone metadata, characters,
/// the notice outbox, and the base of `dnd_zone_run` when the database has none (a legacy
/// database keeps its own; migration 2 brings either shape up to date).
const SCHEMA_V1: &str = r#"
CREATE TABLE IF NOT EXISTS zone_node (
    node_id        TEXT PRIMARY KEY,
    zone_id        TEXT NOT NULL,
    region_id      TEXT NOT NULL DEFAULT '',
    kind           TEXT NOT NULL,
    label          TEXT NOT NULL DEFAULT '',
    is_entry       INTEGER NOT NULL DEFAULT 0,
    is_boss        INTEGER NOT NULL DEFAULT 0,
    pos_x          INTEGER NOT NULL DEFAULT 0,
    pos_y          INTEGER NOT NULL DEFAULT 0,
    content_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS idx_zone_node_zone ON zone_node(zone_id);

CREATE TABLE IF NOT EXISTS zone_edge (
    edge_id        INTEGER PRIMARY KEY AUTOINCREMENT,
    zone_id        TEXT NOT NULL,
    from_node      TEXT NOT NULL,
    to_node        TEXT NOT NULL,
    lock_kind      TEXT NOT NULL DEFAULT 'none',
    lock_data_json TEXT NOT NULL DEFAULT '{}',
    hint           TEXT NOT NULL DEFAULT '',
    weight         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS idx_zone_edge_from ON zone_edge(zone_id, from_node);

-- One row per zone: what the file says besides its rooms and passages.
CREATE TABLE zone_meta (
    zone_id        TEXT PRIMARY KEY,
    ord            INTEGER NOT NULL,            -- order of the zone files (for !zone list)
    name           TEXT NOT NULL,
    tier           INTEGER NOT NULL,
    min_level      INTEGER NOT NULL,
    max_level      INTEGER NOT NULL,
    regions_json   TEXT NOT NULL DEFAULT '[]',  -- [{"region_id","name","order"}]
    allow_loops    INTEGER NOT NULL DEFAULT 0,
    legacy         INTEGER NOT NULL DEFAULT 0,  -- given as a linear room_kinds list
    source_file    TEXT NOT NULL DEFAULT '',
    imported_at_ms INTEGER NOT NULL DEFAULT 0
);

-- The character of a player (a chat user id), for standalone play.
CREATE TABLE player_character (
    user_id        TEXT PRIMARY KEY,
    level          INTEGER NOT NULL DEFAULT 1,
    str            INTEGER NOT NULL DEFAULT 10,
    dex            INTEGER NOT NULL DEFAULT 10,
    con            INTEGER NOT NULL DEFAULT 10,
    int            INTEGER NOT NULL DEFAULT 10,
    wis            INTEGER NOT NULL DEFAULT 10,
    cha            INTEGER NOT NULL DEFAULT 10,
    keys_json      TEXT NOT NULL DEFAULT '[]',
    updated_at_ms  INTEGER NOT NULL DEFAULT 0
);

-- Messages for a player that no command of theirs asked for ("picked for you"): the
-- transport delivers them (GET /api/notices, or before the reply to their next command).
CREATE TABLE zone_notice (
    notice_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id         TEXT NOT NULL,
    run_id          TEXT NOT NULL DEFAULT '',
    text            TEXT NOT NULL,
    html            TEXT NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    delivered_at_ms INTEGER
);
CREATE INDEX idx_zone_notice_user ON zone_notice(user_id, delivered_at_ms);

-- Kept as it is: a legacy database already has this table, with current_room and
-- room_seq_json; a new one starts from the columns every version shares.
CREATE TABLE IF NOT EXISTS dnd_zone_run (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id        TEXT NOT NULL,
    zone_id        TEXT NOT NULL
);
"#;

/// The run-state columns of `dnd_zone_run` (the graph's three, then the rest of the engine's run),
/// added when missing so a legacy table and a new one end up alike.
pub(super) const RUN_COLUMNS: &[(&str, &str)] = &[
    // Where the run is, where it has been, and the fork waiting for the player.
    ("current_node", "TEXT NOT NULL DEFAULT ''"),
    ("visited_nodes", "TEXT NOT NULL DEFAULT '[]'"),
    ("node_choices", "TEXT NOT NULL DEFAULT '{}'"),
    // The engine's run id (it seeds every roll) and the run-map link's token.
    ("run_id", "TEXT NOT NULL DEFAULT ''"),
    ("link_token", "TEXT NOT NULL DEFAULT ''"),
    ("cleared_regions", "TEXT NOT NULL DEFAULT '[]'"),
    ("harvested_nodes", "TEXT NOT NULL DEFAULT '{}'"),
    ("keys_granted", "TEXT NOT NULL DEFAULT '[]'"),
    ("revealed_secrets", "TEXT NOT NULL DEFAULT '[]'"),
    // Perception passages the run failed ([from, to] pairs): what the player sees as "something".
    ("missed_passages", "TEXT NOT NULL DEFAULT '[]'"),
    ("started_at_ms", "INTEGER NOT NULL DEFAULT 0"),
    ("last_action_at_ms", "INTEGER NOT NULL DEFAULT 0"),
    ("completed_at_ms", "INTEGER"),
    ("completed", "INTEGER NOT NULL DEFAULT 0"),
    ("boss_defeated", "INTEGER NOT NULL DEFAULT 0"),
    ("abandoned", "INTEGER NOT NULL DEFAULT 0"),
    // '' while the run goes on, else victory | dead_end | abandoned.
    ("outcome", "TEXT NOT NULL DEFAULT ''"),
    // When the pending fork was offered (NULL: none), for the sweeper's query.
    ("fork_created_at_ms", "INTEGER"),
    // Compare-and-set: every write of the row is `… WHERE id = ? AND version = ?`.
    ("version", "INTEGER NOT NULL DEFAULT 0"),
    // The zone version (`zone_file_version.seq`) the run started on: it walks that graph to
    // its end, whatever is published meanwhile (NULL: a run from before versions, on the
    // zone served).
    ("zone_file_seq", "INTEGER"),
];

/// The columns a legacy `dnd_zone_run` had before the graph model (`migrate --purge-legacy` drops them).
pub const LEGACY_COLUMNS: [&str; 2] = ["current_room", "room_seq_json"];

/// Version 3: characters are written by compare-and-set like runs; a queued notice counts
/// the older ones dropped before it (a player's queue is capped); `/healthz` proves a write
/// can be made with a one-row table.
pub(super) const SCHEMA_V3: &str = r#"
ALTER TABLE player_character ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE zone_notice ADD COLUMN dropped_before INTEGER NOT NULL DEFAULT 0;
CREATE TABLE server_health (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    checked_at_ms  INTEGER NOT NULL
);
"#;

/// Version 5: the Matrix transport's handled events (each answered at most once, across
/// restarts and re-joins) and each player's direct-message room with the bot (where private
/// replies and notices go; was `rooms.json` in the state directory).
pub(super) const SCHEMA_V5: &str = r#"
CREATE TABLE matrix_event (
    event_id       TEXT PRIMARY KEY,
    room_id        TEXT NOT NULL,
    handled_at_ms  INTEGER NOT NULL
);
CREATE INDEX idx_matrix_event_time ON matrix_event(handled_at_ms);
CREATE TABLE matrix_dm (
    user_id        TEXT PRIMARY KEY,
    room_id        TEXT NOT NULL,
    updated_at_ms  INTEGER NOT NULL
);
"#;

/// Version 6: a counter raised by every import of the zones, so instances sharing one
/// database (PostgreSQL) notice that another published or reloaded them and load them again.
pub(super) const SCHEMA_V6: &str = r#"
CREATE TABLE zone_version (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    version        INTEGER NOT NULL
);
INSERT INTO zone_version (id, version) VALUES (1, 0);
"#;

/// Version 8: every zone file imported or published is a version, kept whole while the
/// zone serves it or a run walks it (`file_json` is emptied after: the history of hashes,
/// times and authors stays). The newest version of each zone is what every instance serves;
/// `zone_version.version` is the sequence each new version takes its `seq` from (and what
/// instances poll to notice one). A withdrawal is a version without a file.
pub(super) const SCHEMA_V8: &str = r#"
CREATE TABLE zone_file_version (
    seq            INTEGER PRIMARY KEY,          -- zone_version.version when it was made
    zone_id        TEXT NOT NULL,
    content_hash   TEXT NOT NULL,                -- SHA-256 of the file, hex ('' withdrawn)
    file_json      TEXT,                          -- the file as given; NULL: withdrawn, pruned
    withdrawn      INTEGER NOT NULL DEFAULT 0,
    source         TEXT NOT NULL,                -- 'folder <file>', 'POST /api/zones', …
    made_by        TEXT NOT NULL,                -- who: a user, or the instance itself
    instance       TEXT NOT NULL,                -- the instance that wrote it (host, pid)
    file_mtime_ms  INTEGER,                      -- a folder file's modification time
    created_at_ms  INTEGER NOT NULL
);
CREATE INDEX idx_zone_file_version_zone ON zone_file_version(zone_id, seq);
"#;

/// Version 9: the ended runs past the newest few of each player leave `dnd_zone_run` (the
/// table every command reads) for this one, which keeps what statistics need of them.
pub(super) const SCHEMA_V9: &str = r#"
CREATE TABLE zone_run_history (
    run_id          TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL,
    zone_id         TEXT NOT NULL,
    zone_file_seq   INTEGER,                     -- the zone version it was played on
    started_at_ms   INTEGER NOT NULL,
    completed_at_ms INTEGER,
    outcome         TEXT NOT NULL,               -- boss_defeated, defeated, abandoned, …
    boss_defeated   INTEGER NOT NULL,
    abandoned       INTEGER NOT NULL,
    rooms_visited   INTEGER NOT NULL,
    archived_at_ms  INTEGER NOT NULL
);
CREATE INDEX idx_zone_run_history_user ON zone_run_history(user_id);
CREATE INDEX idx_zone_run_history_zone ON zone_run_history(zone_id);
"#;

/// Version 10: the API tokens an operator makes besides the all-powerful one
/// (`zonegraph token new`), each with a scope. Only a token's SHA-256 is kept: the token is
/// shown once, when made. A revoked token stays, so that its use can be told as revoked.
pub(super) const SCHEMA_V10: &str = r#"
CREATE TABLE zone_api_token (
    token_id      TEXT PRIMARY KEY,              -- the token's public part (zgt_<id>_…)
    token_sha256  TEXT NOT NULL UNIQUE,          -- lowercase hex of the whole token
    scope         TEXT NOT NULL,                 -- admin, publish or transport:<prefix>
    label         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER
);
"#;

/// Version 11: the names players read for a zone's keys and harvests (the file's `keys`
/// and `harvests`), as `{"keys": {…}, "harvests": {…}}`.
pub(super) const SCHEMA_V11: &str = r#"
ALTER TABLE zone_meta ADD COLUMN names_json TEXT NOT NULL DEFAULT '{}';
"#;

/// Version 12: the events outbox (`serve --events-url`): each event of a committed command,
/// written in the command's own transaction, kept until the host game's endpoint took it.
/// A player's events go out in `event_id` order, one at a time; `claimed_until_ms` lets one
/// instance send an event while the others leave it alone.
pub(super) const SCHEMA_V12: &str = r#"
CREATE TABLE zone_event_out (
    event_id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          TEXT NOT NULL,
    zone_id          TEXT NOT NULL DEFAULT '',
    run_token        TEXT NOT NULL DEFAULT '',
    event_json       TEXT NOT NULL,
    created_at_ms    INTEGER NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_at_ms       INTEGER NOT NULL,
    claimed_until_ms INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    delivered_at_ms  INTEGER
);
CREATE INDEX idx_zone_event_out_queue ON zone_event_out(user_id, event_id)
    WHERE delivered_at_ms IS NULL;
"#;

/// Version 13: an ended run's way through the zone kept in the history too (the rooms in
/// order, where it ended, and `node_choices` with the forks it met and its starting level),
/// so play insight reads the runs past the newest few of each player.
pub(super) const SCHEMA_V13: &str = r#"
ALTER TABLE zone_run_history ADD COLUMN current_node TEXT NOT NULL DEFAULT '';
ALTER TABLE zone_run_history ADD COLUMN visited_nodes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE zone_run_history ADD COLUMN node_choices TEXT NOT NULL DEFAULT '{}';
CREATE INDEX idx_zone_run_history_version ON zone_run_history(zone_id, zone_file_seq);
"#;

/// Version 14: the outbox's dead letters: an event given up (refused too often, failing for
/// too long, or shed from a queue over its cap) moves here, whole, with why and its last
/// error, and is kept a while for an operator to read (`zonegraph events dead`). The outbox
/// gets an index of its undelivered events in id order, so the oldest of them all are found
/// without reading the delivered ones.
pub(super) const SCHEMA_V14: &str = r#"
CREATE TABLE zone_event_dead (
    event_id         INTEGER PRIMARY KEY,          -- its id in zone_event_out
    user_id          TEXT NOT NULL,
    zone_id          TEXT NOT NULL DEFAULT '',
    run_token        TEXT NOT NULL DEFAULT '',
    event_json       TEXT NOT NULL,
    created_at_ms    INTEGER NOT NULL,
    attempts         INTEGER NOT NULL,
    cause            TEXT NOT NULL,                -- refused, too_old, player_cap, total_cap
    last_error       TEXT NOT NULL DEFAULT '',
    dead_at_ms       INTEGER NOT NULL
);
CREATE INDEX idx_zone_event_dead_time ON zone_event_dead(dead_at_ms);
CREATE INDEX idx_zone_event_out_waiting ON zone_event_out(event_id)
    WHERE delivered_at_ms IS NULL;
"#;

/// Version 15: a review reads a version's most recent runs through these (`ORDER BY
/// started_at_ms DESC LIMIT n`) and counts the rest from them, without reading every run.
pub(super) const SCHEMA_V15: &str = r#"
CREATE INDEX idx_zone_run_version_started ON dnd_zone_run(zone_id, zone_file_seq, started_at_ms);
CREATE INDEX idx_zone_run_history_version_started
    ON zone_run_history(zone_id, zone_file_seq, started_at_ms);
"#;

/// Version 8 on SQLite: [`SCHEMA_V8`] and the run's `zone_file_seq` column.
fn zone_versions(tx: &Transaction) -> Result<()> {
    tx.execute_batch(SCHEMA_V8)?;
    if !columns(tx, "dnd_zone_run")?
        .iter()
        .any(|c| c == "zone_file_seq")
    {
        tx.execute_batch("ALTER TABLE dnd_zone_run ADD COLUMN zone_file_seq INTEGER")?;
    }
    Ok(())
}

/// One schema migration: SQL, or a step that inspects the database first.
enum Migration {
    Sql(&'static str),
    Step(fn(&Transaction) -> Result<()>),
}

/// The versioned migrations, applied in order; how many were applied is recorded in
/// `PRAGMA user_version` (migration `i` brings the database to version `i + 1`).
const MIGRATIONS: &[Migration] = &[
    Migration::Sql(SCHEMA_V1),
    Migration::Step(add_run_columns),
    Migration::Sql(SCHEMA_V3),
    // Version 4: `missed_passages` (the step adds whatever run column is missing).
    Migration::Step(add_run_columns),
    Migration::Sql(SCHEMA_V5),
    Migration::Sql(SCHEMA_V6),
    // Version 7: the one-active-run index under a name of our own (gogobee's database has a
    // non-unique index called `idx_zone_run_active`, which an `IF NOT EXISTS` took for ours).
    Migration::Step(own_active_index),
    Migration::Step(zone_versions),
    Migration::Sql(SCHEMA_V9),
    Migration::Sql(SCHEMA_V10),
    Migration::Sql(SCHEMA_V11),
    Migration::Sql(SCHEMA_V12),
    Migration::Sql(SCHEMA_V13),
    Migration::Sql(SCHEMA_V14),
    Migration::Sql(SCHEMA_V15),
];

/// The name of the unique index that keeps one active run per player.
pub const ACTIVE_INDEX: &str = "zonegraph_one_active_run";

/// Version 7: [`ACTIVE_INDEX`] (once no player has two active runs: the warm-up ends the
/// older ones first), and our own older `idx_zone_run_active` dropped when it was ours
/// (unique); gogobee's, of the same name, is gogobee's and stays.
fn own_active_index(tx: &Transaction) -> Result<()> {
    let ours: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM pragma_index_list('dnd_zone_run')
               WHERE name = 'idx_zone_run_active' AND \"unique\" = 1)",
            [],
            |r| r.get(0),
        )
        .unwrap_or(false);
    if ours {
        tx.execute_batch("DROP INDEX idx_zone_run_active")?;
    }
    if !has_duplicate_active_runs(tx)? {
        ensure_active_index(tx)?;
    }
    Ok(())
}

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
fn add_run_columns(tx: &Transaction) -> Result<()> {
    let have = columns(tx, "dnd_zone_run")?;
    for (name, decl) in RUN_COLUMNS {
        if !have.iter().any(|c| c == name) {
            tx.execute_batch(&format!(
                "ALTER TABLE dnd_zone_run ADD COLUMN {name} {decl}"
            ))?;
        }
    }
    // gogobee's own run columns may hold NULL where ours hold an empty value.
    tx.execute_batch(
        "UPDATE dnd_zone_run SET current_node = '' WHERE current_node IS NULL;
         UPDATE dnd_zone_run SET visited_nodes = '[]'
           WHERE visited_nodes IS NULL OR trim(visited_nodes) = '';
         UPDATE dnd_zone_run SET node_choices = '{}'
           WHERE node_choices IS NULL OR trim(node_choices) = '';",
    )?;
    // Legacy rows get an engine run id and a link token of their own (gogobee's rows have a
    // run id; `rowid` is the row key of any table, see `crate::db::Conn::run_key`).
    tx.execute(
        "UPDATE dnd_zone_run SET run_id = 'legacy-' || rowid WHERE run_id = '' OR run_id IS NULL",
        [],
    )?;
    let ids: Vec<i64> = {
        let mut st = tx.prepare("SELECT rowid FROM dnd_zone_run WHERE link_token = ''")?;
        st.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for id in ids {
        let token = random_hex()?;
        tx.execute(
            "UPDATE dnd_zone_run SET link_token = ?1 WHERE rowid = ?2",
            params![token, id],
        )?;
    }
    // gogobee's times are DATETIME text in UTC ('2026-01-02 03:04:05'); ours are unix ms.
    let ms = |col: &str| {
        format!(
            "CASE typeof({col}) WHEN 'integer' THEN {col} * 1000
               ELSE CAST(strftime('%s', {col}) AS INTEGER) * 1000 END"
        )
    };
    for (theirs, ours, unset) in [
        ("started_at", "started_at_ms", "= 0"),
        ("last_action_at", "last_action_at_ms", "= 0"),
        ("completed_at", "completed_at_ms", "IS NULL"),
    ] {
        if have.iter().any(|c| c == theirs) {
            tx.execute_batch(&format!(
                "UPDATE dnd_zone_run SET {ours} = COALESCE({}, {ours})
                 WHERE {ours} {unset} AND {theirs} IS NOT NULL",
                ms(theirs)
            ))?;
        }
    }
    // gogobee's run is over when it was won (boss_defeated), given up (abandoned) or
    // completed otherwise (completed_at): the outcome says which, so a finished run stays
    // finished. A run completed without either flag (neither won nor given up) ended where it
    // stood: a dead end, which leaves gogobee's flags as they were.
    tx.execute_batch(
        "UPDATE dnd_zone_run SET outcome = 'abandoned', completed = 1
           WHERE outcome = '' AND abandoned != 0;
         UPDATE dnd_zone_run SET outcome = 'victory', completed = 1
           WHERE outcome = '' AND boss_defeated != 0;",
    )?;
    if have.iter().any(|c| c == "completed") {
        // The older shape of the legacy table: a run marked completed ended in victory.
        tx.execute_batch(
            "UPDATE dnd_zone_run SET outcome = 'victory', boss_defeated = 1
               WHERE outcome = '' AND completed != 0;",
        )?;
    }
    if have.iter().any(|c| c == "completed_at") {
        tx.execute_batch(
            "UPDATE dnd_zone_run SET outcome = 'dead_end', completed = 1
               WHERE outcome = '' AND completed_at IS NOT NULL;",
        )?;
    }
    tx.execute_batch(
        "UPDATE dnd_zone_run
           SET completed_at_ms = COALESCE(NULLIF(last_action_at_ms, 0), started_at_ms)
           WHERE outcome != '' AND completed_at_ms IS NULL;
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_run_id ON dnd_zone_run(run_id);
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_link ON dnd_zone_run(link_token);
         CREATE INDEX IF NOT EXISTS idx_zone_run_user ON dnd_zone_run(user_id);
         CREATE INDEX IF NOT EXISTS idx_zone_run_fork
           ON dnd_zone_run(fork_created_at_ms) WHERE fork_created_at_ms IS NOT NULL;",
    )?;
    // gogobee enforced one active run per player only in code: while a player has two, the
    // warm-up (`crate::db::warm_up_legacy`) ends the older ones and then creates the index.
    if !has_duplicate_active_runs(tx)? {
        ensure_active_index(tx)?;
    }
    Ok(())
}

/// Whether a player has more than one active run (warm rows only).
pub fn has_duplicate_active_runs(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM dnd_zone_run WHERE outcome = '' AND current_node != ''
           GROUP BY user_id HAVING count(*) > 1)",
        [],
        |r| r.get(0),
    )
}

/// At most one active run per player (the store relies on it to refuse a second start).
pub fn ensure_active_index(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "CREATE UNIQUE INDEX IF NOT EXISTS {ACTIVE_INDEX}
           ON dnd_zone_run(user_id) WHERE outcome = '' AND current_node != '';"
    ))
}

/// The column names of `table`.
pub fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    st.query_map([], |r| r.get::<_, String>(1))?.collect()
}

/// 128 random bits as 32 lowercase hex digits (run-link tokens, run ids).
pub fn random_hex() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Before an irreversible step: a copy of `conn`'s database as `<db>.<step>.bak` beside it
/// (`<db>.<step>-<unix seconds>.bak` when that exists already: an older copy is never
/// overwritten), said in the log. An in-memory database has nothing to copy.
pub fn keep_a_copy(conn: &Connection, step: &str) -> Result<Option<std::path::PathBuf>> {
    let Some(path) = conn
        .path()
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
    else {
        return Ok(None);
    };
    let mut copy = std::path::PathBuf::from(format!("{}.{step}.bak", path.display()));
    if copy.exists() {
        let now = crate::clock::now_ms() / 1000;
        copy = std::path::PathBuf::from(format!("{}.{step}-{now}.bak", path.display()));
    }
    vacuum_into(conn, &copy)
        .with_context(|| format!("cannot copy {} to {} first", path.display(), copy.display()))?;
    tracing::info!(
        from = %path.display(),
        to = %copy.display(),
        step,
        "copied the database before changing it"
    );
    Ok(Some(copy))
}

/// A copy of the SQLite database at `from`, written to `to` (`VACUUM INTO`), reading `from`
/// only: it is opened read-only, so not even its journal mode changes (a dry run works on the
/// copy).
pub fn copy_database(from: &Path, to: &Path) -> Result<()> {
    let conn = Connection::open_with_flags(
        from,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open {} to read it", from.display()))?;
    vacuum_into(&conn, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    Ok(())
}

/// `VACUUM INTO` a new private file (mode 0600 from its first byte, like the database: a copy
/// holds every run link's token), made empty first, never through a symlink or over a file;
/// removed again when the copy fails.
fn vacuum_into(conn: &Connection, to: &Path) -> Result<()> {
    drop(crate::private::create_new(to)?);
    conn.execute("VACUUM INTO ?1", [to.to_string_lossy()])
        .map(drop)
        .map_err(|e| {
            let _ = std::fs::remove_file(to);
            e.into()
        })
}

/// `dnd_zone_run`'s rows, and how many of them have no graph position yet (gogobee's runs
/// from before the graph, which the warm-up gives one).
pub fn run_rows(conn: &Connection) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT count(*), count(*) FILTER (WHERE current_node = '') FROM dnd_zone_run",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// How many players have a character in gogobee's `dnd_character` and none of ours yet: the
/// sheets a first command would carry over (0 without gogobee's table).
pub fn gogobee_characters_to_carry(conn: &Connection) -> Result<i64> {
    if columns(conn, "dnd_character")?.is_empty() {
        return Ok(0);
    }
    Ok(conn.query_row(
        "SELECT count(*) FROM dnd_character
         WHERE user_id NOT IN (SELECT user_id FROM player_character)",
        [],
        |r| r.get(0),
    )?)
}

/// Opens (creating if needed) a database with the durability settings of the module docs. A
/// new file is made readable by its owner only (0600: it holds every run-link token); SQLite
/// gives its `-wal` and `-shm` files the database file's permissions.
pub fn open(path: &Path) -> Result<Connection> {
    #[cfg(unix)]
    if !path.exists() {
        use std::os::unix::fs::OpenOptionsExt as _;
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path);
        match made {
            Ok(_) => {}
            // Made meanwhile by another process: open it as it is.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("cannot create {}", path.display()))
                );
            }
        }
    }
    let conn = Connection::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    configure(&conn).with_context(|| format!("cannot configure {}", path.display()))?;
    Ok(conn)
}

/// WAL, `synchronous = FULL` (see the module docs), a busy timeout for the other
/// connections of the pool (and another process, e.g. `zonegraph migrate`).
pub fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(10))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidQuery);
    }
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
    Ok(())
}

/// Runs every pending migration, each in its own immediate transaction that also records the
/// new `user_version`, so a crash leaves the database at a whole version and two processes
/// starting together apply each migration once (the second waits for the write lock, then
/// finds the version already raised). A database written by a newer zonegraph is refused.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    // A database zonegraph did not create (gogobee's: tables, and no migration of ours yet)
    // is copied before it is changed, since nothing here can be undone.
    if user_version(conn)? == 0 && !columns(conn, "dnd_zone_run")?.is_empty() {
        keep_a_copy(conn, "pre-zonegraph")?;
    }
    loop {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context("cannot migrate the database: cannot take the write lock")?;
        let version = user_version(&tx)?;
        if version > SCHEMA_VERSION {
            anyhow::bail!(
                "the database is at schema version {version}, newer than this zonegraph \
                 knows ({SCHEMA_VERSION}); upgrade zonegraph instead"
            );
        }
        let Some(migration) = usize::try_from(version)
            .ok()
            .and_then(|v| MIGRATIONS.get(v))
        else {
            return Ok(());
        };
        let to = version + 1;
        match migration {
            Migration::Sql(sql) => tx.execute_batch(sql).map_err(anyhow::Error::from),
            Migration::Step(step) => step(&tx),
        }
        .and_then(|()| Ok(tx.pragma_update(None, "user_version", to)?))
        .and_then(|()| Ok(tx.commit()?))
        .with_context(|| format!("cannot migrate the database to schema version {to}"))?;
    }
}

/// `PRAGMA user_version`: how many migrations the database has had.
pub fn user_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Whether `dnd_zone_run` still has the legacy columns.
pub fn has_legacy_columns(conn: &Connection) -> Result<bool> {
    let cols = columns(conn, "dnd_zone_run")?;
    Ok(LEGACY_COLUMNS.iter().all(|l| cols.iter().any(|c| c == l)))
}

/// Whether the SQLite file at `path` still has gogobee's linear run columns (any of
/// [`LEGACY_COLUMNS`]): gogobee may still serve zones from it. Looked at read-only; a file
/// that is not there, or not a database with that table, has none.
pub fn gogobee_columns_at(path: &Path) -> Result<bool> {
    if !path.is_file() {
        return Ok(false);
    }
    let look = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let cols = columns(&look, "dnd_zone_run").unwrap_or_default();
    Ok(LEGACY_COLUMNS.iter().any(|l| cols.iter().any(|c| c == l)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn migrations_run_once_each_and_a_newer_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db");
        let mut conn = open(&path).unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        // Again, and from a second connection at the same time: nothing to do.
        let mut other = open(&path).unwrap();
        let t = std::thread::spawn(move || migrate(&mut other).map(|()| user_version(&other)));
        migrate(&mut conn).unwrap();
        assert_eq!(t.join().unwrap().unwrap().unwrap(), SCHEMA_VERSION);
        assert!(
            columns(&conn, "dnd_zone_run")
                .unwrap()
                .iter()
                .any(|c| c == "missed_passages")
        );
        // Written by a newer zonegraph: refused with what to do, and left as it is.
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("newer than this zonegraph") && msg.contains("upgrade"),
            "{msg}"
        );
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION + 1);
    }

    #[test]
    fn a_failed_migration_leaves_the_database_at_a_whole_version() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("z.db")).unwrap();
        // A table in the way of version 1's `CREATE TABLE zone_meta`.
        conn.execute_batch("CREATE TABLE zone_meta (x INTEGER);")
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(format!("{err:#}").contains("schema version 1"), "{err:#}");
        assert_eq!(user_version(&conn).unwrap(), 0);
        assert!(
            columns(&conn, "zone_node").unwrap().is_empty(),
            "half of version 1 stayed"
        );
    }
}
