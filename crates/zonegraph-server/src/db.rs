//! SQLite: the schema (seed §2, G1, G4, G9), its migrations, zone import and the row shapes
//! of zones, runs, characters and notices. The only module that knows SQL.
//!
//! Durability: WAL with `synchronous = FULL`. In WAL mode FULL syncs the log on every commit,
//! so a move acknowledged to a player survives not only a killed process (NORMAL would do for
//! that) but a power cut or kernel crash too; NORMAL could lose the last commits there, and a
//! chat bot that said "you enter the Side Chapel" and then forgets it is the bug we must not
//! have. The cost is an fsync per commit; `crate::store` group-commits concurrent writes so
//! one fsync covers many commands, and BENCHMARKS.md measures it against a bare loop of write
//! transactions with the same setting.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use rusqlite_migration::{HookResult, M, Migrations};
use zonegraph_core::engine::{self, Character, Outcome, PendingFork, Run};
use zonegraph_core::format::{ContentFile, EdgeFile, LockKind, NodeFile, RegionFile, ZoneFile};
use zonegraph_core::zone::{self, NodeId, Zone};
use zonegraph_core::{Ability, Diagnostic};

/// `zone_node` and `zone_edge` exactly as the seed defines them, zone metadata, characters,
/// the notice outbox, and the base of `dnd_zone_run` when the database has none (a legacy
/// database keeps its own; migration 2 brings either shape up to date).
const SCHEMA_V1: &str = r#"
CREATE TABLE zone_node (
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
CREATE INDEX idx_zone_node_zone ON zone_node(zone_id);

CREATE TABLE zone_edge (
    edge_id        INTEGER PRIMARY KEY AUTOINCREMENT,
    zone_id        TEXT NOT NULL,
    from_node      TEXT NOT NULL,
    to_node        TEXT NOT NULL,
    lock_kind      TEXT NOT NULL DEFAULT 'none',
    lock_data_json TEXT NOT NULL DEFAULT '{}',
    hint           TEXT NOT NULL DEFAULT '',
    weight         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX idx_zone_edge_from ON zone_edge(zone_id, from_node);

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

-- Grandfathered (seed §2): a legacy database already has this table, with current_room and
-- room_seq_json; a new one starts from the columns every version shares.
CREATE TABLE IF NOT EXISTS dnd_zone_run (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id        TEXT NOT NULL,
    zone_id        TEXT NOT NULL
);
"#;

/// The run-state columns of `dnd_zone_run` (seed §2 plus the rest of the engine's run),
/// added when missing so a legacy table and a new one end up alike.
const RUN_COLUMNS: &[(&str, &str)] = &[
    // The seed's three.
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
];

/// The columns a legacy `dnd_zone_run` had before the graph model (seed G9c drops them).
pub const LEGACY_COLUMNS: [&str; 2] = ["current_room", "room_seq_json"];

/// The versioned migrations, applied in order and recorded in `PRAGMA user_version`.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(SCHEMA_V1),
        M::up_with_hook("", add_run_columns),
        // Version 3: `missed_passages` (the step adds whatever run column is missing).
        M::up_with_hook("", add_run_columns),
    ])
}

fn add_run_columns(tx: &Transaction) -> HookResult {
    let have = columns(tx, "dnd_zone_run")?;
    for (name, decl) in RUN_COLUMNS {
        if !have.iter().any(|c| c == name) {
            tx.execute_batch(&format!(
                "ALTER TABLE dnd_zone_run ADD COLUMN {name} {decl}"
            ))?;
        }
    }
    // Legacy rows get an engine run id and a link token of their own.
    tx.execute(
        "UPDATE dnd_zone_run SET run_id = 'legacy-' || id WHERE run_id = ''",
        [],
    )?;
    let ids: Vec<i64> = {
        let mut st = tx.prepare("SELECT id FROM dnd_zone_run WHERE link_token = ''")?;
        st.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for id in ids {
        let token = random_hex().map_err(|e| rusqlite_migration::HookError::Hook(e.to_string()))?;
        tx.execute(
            "UPDATE dnd_zone_run SET link_token = ?1 WHERE id = ?2",
            params![token, id],
        )?;
    }
    if have.iter().any(|c| c == "completed") {
        // A legacy run marked completed ended in victory; one marked abandoned was given up.
        tx.execute_batch(
            "UPDATE dnd_zone_run SET outcome = 'abandoned' WHERE outcome = '' AND abandoned != 0;
             UPDATE dnd_zone_run SET outcome = 'victory', boss_defeated = 1
               WHERE outcome = '' AND completed != 0;",
        )?;
    }
    tx.execute_batch(
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_run_id ON dnd_zone_run(run_id);
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_link ON dnd_zone_run(link_token);
         CREATE INDEX IF NOT EXISTS idx_zone_run_user ON dnd_zone_run(user_id, id);
         -- At most one active run per player.
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_active
           ON dnd_zone_run(user_id) WHERE outcome = '' AND current_node != '';
         CREATE INDEX IF NOT EXISTS idx_zone_run_fork
           ON dnd_zone_run(fork_created_at_ms) WHERE fork_created_at_ms IS NOT NULL;",
    )?;
    Ok(())
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

/// Opens (creating if needed) a database with the durability settings of the module docs.
pub fn open(path: &Path) -> Result<Connection> {
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

/// Runs every pending migration.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrations()
        .to_latest(conn)
        .context("cannot migrate the database")
}

/// Whether `dnd_zone_run` still has the legacy columns.
pub fn has_legacy_columns(conn: &Connection) -> Result<bool> {
    let cols = columns(conn, "dnd_zone_run")?;
    Ok(LEGACY_COLUMNS.iter().all(|l| cols.iter().any(|c| c == l)))
}

// ---------------------------------------------------------------------------------------
// Zones

/// Replaces every zone in the tables with `zones` (`(source file, zone)`, in order), in one
/// transaction: the folder is the source of truth.
pub fn import_zones(conn: &mut Connection, zones: &[(String, Zone)], now: i64) -> Result<()> {
    let tx = conn.transaction()?;
    tx.execute_batch("DELETE FROM zone_edge; DELETE FROM zone_node; DELETE FROM zone_meta;")?;
    {
        let mut meta = tx.prepare(
            "INSERT INTO zone_meta (zone_id, ord, name, tier, min_level, max_level,
               regions_json, allow_loops, legacy, source_file, imported_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut node = tx.prepare(
            "INSERT INTO zone_node (node_id, zone_id, region_id, kind, label, is_entry, is_boss,
               pos_x, pos_y, content_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut edge = tx.prepare(
            "INSERT INTO zone_edge (zone_id, from_node, to_node, lock_kind, lock_data_json,
               hint, weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (ord, (source, zone)) in zones.iter().enumerate() {
            let file = zone.to_file();
            meta.execute(params![
                file.zone_id,
                ord as i64,
                file.name,
                file.tier,
                file.min_level,
                file.max_level,
                serde_json::to_string(&file.regions)?,
                file.allow_loops,
                zone.legacy,
                source,
                now
            ])?;
            for n in file.nodes.as_deref().unwrap_or_default() {
                node.execute(params![
                    n.node_id,
                    file.zone_id,
                    n.region_id,
                    n.kind.as_str(),
                    n.label,
                    n.is_entry,
                    n.is_boss,
                    n.pos_x.unwrap_or(0),
                    n.pos_y.unwrap_or(0),
                    content_json(n)?,
                ])
                .with_context(|| format!("cannot store room {}", n.node_id))?;
            }
            for e in file.edges.as_deref().unwrap_or_default() {
                edge.execute(params![
                    file.zone_id,
                    e.from_node,
                    e.to_node,
                    e.lock_kind.as_str(),
                    serde_json::to_string(&e.lock_data)?,
                    e.hint,
                    e.weight
                ])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// `content_json`: the file's `content` object, plus `"pos_hint": false` for a room without
/// layout hints (the seed's pos_x/pos_y columns cannot say "none").
fn content_json(n: &NodeFile) -> Result<String> {
    let mut v = serde_json::to_value(&n.content)?;
    if n.pos_x.is_none()
        && n.pos_y.is_none()
        && let Some(m) = v.as_object_mut()
    {
        m.insert("pos_hint".into(), false.into());
    }
    Ok(v.to_string())
}

/// `zone_meta`: id, name, tier, min_level, max_level, regions_json, allow_loops, legacy.
type MetaRow = (String, String, u8, u32, u32, String, bool, bool);

/// Loads every zone from the tables (not from the files): the runtime graphs. A zone whose
/// rows do not build cleanly is an error naming it.
pub fn load_zones(conn: &Connection) -> Result<Vec<Zone>> {
    let mut metas = conn.prepare(
        "SELECT zone_id, name, tier, min_level, max_level, regions_json, allow_loops, legacy
         FROM zone_meta ORDER BY ord, zone_id",
    )?;
    let mut nodes = conn.prepare(
        "SELECT node_id, kind, label, is_entry, is_boss, region_id, pos_x, pos_y, content_json
         FROM zone_node WHERE zone_id = ?1 ORDER BY rowid",
    )?;
    let mut edges = conn.prepare(
        "SELECT from_node, to_node, lock_kind, lock_data_json, hint, weight
         FROM zone_edge WHERE zone_id = ?1 ORDER BY edge_id",
    )?;
    let rows: Vec<MetaRow> = metas
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for (zone_id, name, tier, min_level, max_level, regions_json, allow_loops, legacy) in rows {
        let bad = |what: &str| format!("zone {zone_id}: bad {what} in the database");
        let regions: Vec<RegionFile> =
            serde_json::from_str(&regions_json).with_context(|| bad("regions_json"))?;
        let node_rows = nodes
            .query_map([&zone_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, bool>(3)?,
                    r.get::<_, bool>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, i32>(6)?,
                    r.get::<_, i32>(7)?,
                    r.get::<_, String>(8)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut node_files = Vec::with_capacity(node_rows.len());
        for (node_id, kind, label, is_entry, is_boss, region_id, x, y, content) in node_rows {
            let mut content: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&content)
                    .with_context(|| bad(&format!("content_json of {node_id}")))?;
            let hinted = content.remove("pos_hint") != Some(false.into());
            let content: ContentFile = serde_json::from_value(content.into())
                .with_context(|| bad(&format!("content_json of {node_id}")))?;
            node_files.push(NodeFile {
                kind: serde_json::from_value(kind.into())
                    .with_context(|| bad(&format!("kind of {node_id}")))?,
                node_id,
                label,
                is_entry,
                is_boss,
                region_id,
                pos_x: hinted.then_some(x),
                pos_y: hinted.then_some(y),
                content,
            });
        }
        let edge_rows = edges
            .query_map([&zone_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i32>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut edge_files = Vec::with_capacity(edge_rows.len());
        for (from_node, to_node, lock_kind, lock_data, hint, weight) in edge_rows {
            let lock_kind: LockKind = serde_json::from_value(lock_kind.into())
                .with_context(|| bad(&format!("lock_kind of {from_node} -> {to_node}")))?;
            let lock_data: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&lock_data)
                    .with_context(|| bad(&format!("lock_data_json of {from_node} -> {to_node}")))?;
            edge_files.push(EdgeFile {
                from_node,
                to_node,
                lock_kind,
                lock_data,
                hint,
                weight,
            });
        }
        let file = ZoneFile {
            schema: None,
            format: zonegraph_core::format::FORMAT_VERSION,
            zone_id: zone_id.clone(),
            name,
            tier,
            min_level,
            max_level,
            regions,
            allow_loops,
            nodes: Some(node_files),
            edges: Some(edge_files),
            room_kinds: None,
        };
        let (mut zone, findings) = zone::build(&file);
        if let Some(d) = findings.iter().find(|d: &&Diagnostic| d.is_error()) {
            bail!(
                "zone {zone_id} in the database does not build: {}",
                d.message
            );
        }
        zone.legacy = legacy;
        out.push(zone);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Runs

/// A run row: the engine's run plus what only the server keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    /// `dnd_zone_run.id`.
    pub id: i64,
    pub user_id: String,
    pub version: i64,
    pub link_token: String,
    pub run: Run,
}

/// The columns [`run_from_row`] reads, in order.
pub const RUN_SELECT: &str = "SELECT id, user_id, version, link_token, run_id, zone_id,
    current_node, visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
    revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, boss_defeated,
    abandoned, outcome, missed_passages FROM dnd_zone_run";

fn json_col<T: serde::de::DeserializeOwned>(r: &Row, i: usize) -> rusqlite::Result<T> {
    let s: String = r.get(i)?;
    serde_json::from_str(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

/// Reads a row selected with [`RUN_SELECT`].
pub fn run_from_row(r: &Row) -> rusqlite::Result<StoredRun> {
    let node_choices: serde_json::Value = json_col(r, 8)?;
    let pending_fork: Option<PendingFork> = if node_choices
        .as_object()
        .is_some_and(serde_json::Map::is_empty)
    {
        None
    } else {
        Some(serde_json::from_value(node_choices).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, e.into())
        })?)
    };
    let outcome: String = r.get(18)?;
    let outcome: Option<Outcome> = if outcome.is_empty() {
        None
    } else {
        Some(serde_json::from_value(outcome.into()).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(18, rusqlite::types::Type::Text, e.into())
        })?)
    };
    Ok(StoredRun {
        id: r.get(0)?,
        user_id: r.get(1)?,
        version: r.get(2)?,
        link_token: r.get(3)?,
        run: Run {
            run_id: r.get(4)?,
            zone_id: r.get(5)?,
            current_node: NodeId(r.get(6)?),
            visited_nodes: json_col(r, 7)?,
            pending_fork,
            cleared_regions: json_col(r, 9)?,
            harvested: json_col(r, 10)?,
            keys_granted: json_col(r, 11)?,
            revealed_secrets: json_col(r, 12)?,
            missed_passages: json_col(r, 19)?,
            started_at: r.get(13)?,
            last_action_at: r.get(14)?,
            completed_at: r.get(15)?,
            boss_defeated: r.get(16)?,
            abandoned: r.get(17)?,
            outcome,
        },
    })
}

/// The column values of a run, in the order of [`RUN_WRITE_COLUMNS`].
struct RunValues {
    current_node: String,
    visited: String,
    choices: String,
    cleared: String,
    harvested: String,
    keys: String,
    revealed: String,
    missed: String,
    outcome: String,
    fork_created: Option<i64>,
    /// For legacy readers while the old columns exist (seed G4 dual write).
    current_room: i64,
}

fn values(run: &Run) -> Result<RunValues> {
    Ok(RunValues {
        current_node: run.current_node.0.clone(),
        visited: serde_json::to_string(&run.visited_nodes)?,
        choices: match &run.pending_fork {
            Some(f) => serde_json::to_string(f)?,
            None => "{}".into(),
        },
        cleared: serde_json::to_string(&run.cleared_regions)?,
        harvested: serde_json::to_string(&run.harvested)?,
        keys: serde_json::to_string(&run.keys_granted)?,
        revealed: serde_json::to_string(&run.revealed_secrets)?,
        missed: serde_json::to_string(&run.missed_passages)?,
        outcome: match run.outcome {
            Some(o) => serde_json::to_value(o)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            None => String::new(),
        },
        fork_created: run.pending_fork.as_ref().map(|f| f.created_at),
        current_room: run.visited_nodes.len().saturating_sub(1) as i64,
    })
}

/// Inserts a new run for `user` with a fresh link token; returns the row.
pub fn insert_run(tx: &Connection, user: &str, run: &Run, legacy_cols: bool) -> Result<StoredRun> {
    let v = values(run)?;
    let token = random_hex()?;
    let legacy = if legacy_cols {
        ", current_room, room_seq_json"
    } else {
        ""
    };
    let legacy_vals = if legacy_cols { ", ?19, '[]'" } else { "" };
    let sql = format!(
        "INSERT INTO dnd_zone_run (user_id, zone_id, run_id, link_token, current_node,
           visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
           revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, completed,
           boss_defeated, abandoned, outcome, fork_created_at_ms, missed_passages,
           version{legacy})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
           ?18, ?20, ?21, 0{legacy_vals})"
    );
    let mut st = tx.prepare_cached(&sql)?;
    st.execute(params![
        user,
        run.zone_id,
        run.run_id,
        token,
        v.current_node,
        v.visited,
        v.choices,
        v.cleared,
        v.harvested,
        v.keys,
        v.revealed,
        run.started_at,
        run.last_action_at,
        run.completed_at,
        run.is_over(),
        run.boss_defeated,
        run.abandoned,
        v.outcome,
        v.current_room,
        v.fork_created,
        v.missed,
    ])
    .with_context(|| format!("cannot store run {}", run.run_id))?;
    Ok(StoredRun {
        id: tx.last_insert_rowid(),
        user_id: user.to_string(),
        version: 0,
        link_token: token,
        run: run.clone(),
    })
}

/// Writes `run` over row `id` if it is still at `version` (compare-and-set); false when
/// another writer got there first.
pub fn update_run_cas(
    tx: &Connection,
    id: i64,
    version: i64,
    run: &Run,
    legacy_cols: bool,
) -> Result<bool> {
    let v = values(run)?;
    let legacy = if legacy_cols {
        ", current_room = ?18"
    } else {
        ""
    };
    let sql = format!(
        "UPDATE dnd_zone_run SET current_node = ?3, visited_nodes = ?4, node_choices = ?5,
           cleared_regions = ?6, harvested_nodes = ?7, keys_granted = ?8, revealed_secrets = ?9,
           last_action_at_ms = ?10, completed_at_ms = ?11, completed = ?12, boss_defeated = ?13,
           abandoned = ?14, outcome = ?15, fork_created_at_ms = ?16, missed_passages = ?17,
           version = version + 1{legacy}
         WHERE id = ?1 AND version = ?2"
    );
    let mut st = tx.prepare_cached(&sql)?;
    let all = params![
        id,
        version,
        v.current_node,
        v.visited,
        v.choices,
        v.cleared,
        v.harvested,
        v.keys,
        v.revealed,
        run.last_action_at,
        run.completed_at,
        run.is_over(),
        run.boss_defeated,
        run.abandoned,
        v.outcome,
        v.fork_created,
        v.missed,
        v.current_room,
    ];
    // ?18 (current_room) is bound only while the legacy column exists.
    let n = st.execute(&all[..if legacy_cols { 18 } else { 17 }])?;
    Ok(n == 1)
}

/// The player's active run, or else their latest one.
pub fn player_run(conn: &Connection, user: &str) -> Result<Option<StoredRun>> {
    let mut st = conn.prepare_cached(&format!(
        "{RUN_SELECT} WHERE user_id = ?1 AND current_node != ''
         ORDER BY (outcome = '') DESC, id DESC LIMIT 1"
    ))?;
    Ok(st.query_row([user], run_from_row).optional()?)
}

/// The run a link token names.
pub fn run_by_token(conn: &Connection, token: &str) -> Result<Option<StoredRun>> {
    let mut st = conn.prepare_cached(&format!("{RUN_SELECT} WHERE link_token = ?1"))?;
    Ok(st.query_row([token], run_from_row).optional()?)
}

/// Every run row (for checks and `zonegraph migrate`).
pub fn all_runs(conn: &Connection) -> Result<Vec<StoredRun>> {
    let mut st = conn.prepare(&format!(
        "{RUN_SELECT} WHERE current_node != '' ORDER BY id"
    ))?;
    let rows = st
        .query_map([], run_from_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Users whose active run has a fork offered at or before `due` (the sweeper's work).
pub fn users_with_forks_due(conn: &Connection, due: i64) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT user_id FROM dnd_zone_run
         WHERE fork_created_at_ms IS NOT NULL AND fork_created_at_ms <= ?1 AND outcome = ''
         ORDER BY user_id",
    )?;
    let rows = st
        .query_map([due], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

// ---------------------------------------------------------------------------------------
// Legacy runs (seed G4, G9c)

/// What warming up the legacy rows did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WarmUp {
    pub warmed: usize,
    /// Rows that could not be warmed up: `(id, zone_id, why)`. Kept as they are.
    pub stuck: Vec<(i64, String, String)>,
}

/// Fills current_node and the rest of the run state from current_room for every legacy row
/// that has none yet (seed G4), with the zones loaded from the tables. Rows whose zone is
/// unknown or whose room index does not fit are left untouched and reported.
pub fn warm_up_legacy(conn: &mut Connection, zones: &[Zone]) -> Result<WarmUp> {
    let mut out = WarmUp::default();
    if !has_legacy_columns(conn)? {
        return Ok(out);
    }
    let cols = columns(conn, "dnd_zone_run")?;
    let started = if cols.iter().any(|c| c == "started_at") {
        "started_at"
    } else {
        "0"
    };
    let tx = conn.transaction()?;
    let rows: Vec<(i64, String, String, i64, i64, String)> = {
        let mut st = tx.prepare(&format!(
            "SELECT id, run_id, zone_id, current_room, COALESCE({started}, 0), outcome
             FROM dnd_zone_run WHERE current_node = '' ORDER BY id"
        ))?;
        st.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                r.get(5)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    for (id, run_id, zone_id, current_room, started_s, outcome) in rows {
        let Some(zone) = zones.iter().find(|z| z.id == zone_id) else {
            out.stuck
                .push((id, zone_id.clone(), format!("zone {zone_id} is not loaded")));
            continue;
        };
        let Ok(room) = usize::try_from(current_room) else {
            out.stuck.push((
                id,
                zone_id,
                format!("current_room {current_room} is negative"),
            ));
            continue;
        };
        // Legacy times are unix seconds.
        let started_ms = started_s.saturating_mul(1000);
        let mut run = match engine::warm_up_legacy(zone, &run_id, room, started_ms) {
            Ok(run) => run,
            Err(refusal) => {
                out.stuck
                    .push((id, zone_id, zonegraph_core::chat::refusal(&refusal).text));
                continue;
            }
        };
        match outcome.as_str() {
            "victory" => {
                run.outcome = Some(Outcome::Victory);
                run.boss_defeated = true;
                run.completed_at = Some(started_ms);
            }
            "abandoned" => {
                run.outcome = Some(Outcome::Abandoned);
                run.abandoned = true;
                run.completed_at = Some(started_ms);
            }
            _ => {}
        }
        let version: i64 = tx.query_row(
            "SELECT version FROM dnd_zone_run WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?;
        tx.execute(
            "UPDATE dnd_zone_run SET started_at_ms = ?2 WHERE id = ?1",
            params![id, started_ms],
        )?;
        if !update_run_cas(&tx, id, version, &run, true)? {
            bail!("run row {id} changed while warming it up");
        }
        out.warmed += 1;
    }
    tx.commit()?;
    Ok(out)
}

/// Drops `current_room` and `room_seq_json` (seed G9c). Idempotent: a database without them
/// is left alone. Refuses while a row still needs them (not warmed up).
pub fn purge_legacy(conn: &mut Connection) -> Result<bool> {
    let cols = columns(conn, "dnd_zone_run")?;
    let present: Vec<&str> = LEGACY_COLUMNS
        .iter()
        .copied()
        .filter(|l| cols.iter().any(|c| c == l))
        .collect();
    if present.is_empty() {
        return Ok(false);
    }
    let cold: Vec<i64> = {
        let mut st =
            conn.prepare("SELECT id FROM dnd_zone_run WHERE current_node = '' ORDER BY id")?;
        st.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    if !cold.is_empty() {
        bail!(
            "cannot drop the legacy columns: {} run row{} still need current_room (ids {}); \
             import their zones with --zones so they can be warmed up",
            cold.len(),
            if cold.len() == 1 { "" } else { "s" },
            cold.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let tx = conn.transaction()?;
    for c in present {
        tx.execute_batch(&format!("ALTER TABLE dnd_zone_run DROP COLUMN {c}"))?;
    }
    tx.commit()?;
    Ok(true)
}

// ---------------------------------------------------------------------------------------
// Characters and notices

/// The player's character, when one was stored.
pub fn character(conn: &Connection, user: &str) -> Result<Option<Character>> {
    let mut st = conn.prepare_cached(
        "SELECT level, str, dex, con, int, wis, cha, keys_json FROM player_character
         WHERE user_id = ?1",
    )?;
    let row = st
        .query_row([user], |r| {
            let mut scores = [10; 6];
            for a in Ability::ALL {
                scores[a.index()] = r.get(1 + a.index())?;
            }
            let keys: BTreeSet<String> = json_col(r, 7)?;
            Ok(Character {
                level: r.get(0)?,
                scores,
                keys,
            })
        })
        .optional()?;
    Ok(row)
}

/// Stores the player's character.
pub fn put_character(tx: &Connection, user: &str, c: &Character, now: i64) -> Result<()> {
    let mut st = tx.prepare_cached(
        "INSERT INTO player_character (user_id, level, str, dex, con, int, wis, cha, keys_json,
           updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT(user_id) DO UPDATE SET level = excluded.level, str = excluded.str,
           dex = excluded.dex, con = excluded.con, int = excluded.int, wis = excluded.wis,
           cha = excluded.cha, keys_json = excluded.keys_json,
           updated_at_ms = excluded.updated_at_ms",
    )?;
    let s = c.scores;
    st.execute(params![
        user,
        c.level,
        s[0],
        s[1],
        s[2],
        s[3],
        s[4],
        s[5],
        serde_json::to_string(&c.keys)?,
        now
    ])?;
    Ok(())
}

/// A queued notice.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Notice {
    /// Its row, for [`return_notices`]; not part of the HTTP API's JSON.
    #[serde(skip)]
    pub id: i64,
    pub text: String,
    pub html: String,
    pub created_at_ms: i64,
}

/// Queues a notice for `user`.
pub fn push_notice(
    tx: &Connection,
    user: &str,
    run_id: &str,
    text: &str,
    html: &str,
    now: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO zone_notice (user_id, run_id, text, html, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![user, run_id, text, html, now])?;
    Ok(())
}

/// Users with notices not delivered yet, sorted.
pub fn users_with_notices(conn: &Connection) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT user_id FROM zone_notice WHERE delivered_at_ms IS NULL ORDER BY user_id",
    )?;
    let rows = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Whether `user` has notices not delivered yet (a cheap read before taking the writer).
pub fn has_pending_notices(conn: &Connection, user: &str) -> Result<bool> {
    let mut st = conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM zone_notice WHERE user_id = ?1 AND delivered_at_ms IS NULL)",
    )?;
    Ok(st.query_row([user], |r| r.get(0))?)
}

/// Takes the undelivered notices of `user`, oldest first, marking them delivered.
pub fn take_notices(tx: &Connection, user: &str, now: i64) -> Result<Vec<Notice>> {
    let notices: Vec<(i64, Notice)> = {
        let mut st = tx.prepare_cached(
            "SELECT notice_id, text, html, created_at_ms FROM zone_notice
             WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY notice_id",
        )?;
        st.query_map([user], |r| {
            Ok((
                r.get(0)?,
                Notice {
                    id: r.get(0)?,
                    text: r.get(1)?,
                    html: r.get(2)?,
                    created_at_ms: r.get(3)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    if let Some(last) = notices.last() {
        tx.execute(
            "UPDATE zone_notice SET delivered_at_ms = ?3
             WHERE user_id = ?1 AND delivered_at_ms IS NULL AND notice_id <= ?2",
            params![user, last.0, now],
        )?;
    }
    Ok(notices.into_iter().map(|(_, n)| n).collect())
}

/// Puts notices taken by [`take_notices`] back in `user`'s queue (their send failed and may
/// succeed later); they keep their places, so the queue's order is unchanged.
pub fn return_notices(tx: &Connection, user: &str, ids: &[i64]) -> Result<()> {
    let mut st = tx.prepare_cached(
        "UPDATE zone_notice SET delivered_at_ms = NULL WHERE user_id = ?1 AND notice_id = ?2",
    )?;
    for id in ids {
        st.execute(params![user, id])?;
    }
    Ok(())
}
