//! Runs: `dnd_zone_run` rows read into the engine's runs, inserted, and written by
//! compare-and-set on their version.

use anyhow::{Context as _, Result};
use rusqlite::{Connection, OptionalExtension, Row, params};
use std::collections::BTreeSet;

use zonegraph_core::engine::{EncounterCheck, Outcome, PendingEncounter, PendingFork, Run};
use zonegraph_core::zone::NodeId;

use super::random_hex;

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

/// The columns [`run_from_row`] reads, in order. The row key is `rowid`: our own table's
/// `id INTEGER PRIMARY KEY` is its alias, and gogobee's table (keyed by `run_id TEXT`) has one
/// too.
pub const RUN_SELECT: &str = "SELECT rowid, user_id, version, link_token, run_id, zone_id,
    current_node, visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
    revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, boss_defeated,
    abandoned, outcome, missed_passages FROM dnd_zone_run";

/// A run row's columns as stored, the same on every database: JSON lists and maps as text.
#[derive(Debug)]
pub struct RunColumns {
    pub id: i64,
    pub user_id: String,
    pub version: i64,
    pub link_token: String,
    pub run_id: String,
    pub zone_id: String,
    pub current_node: String,
    pub visited_nodes: String,
    pub node_choices: String,
    pub cleared_regions: String,
    pub harvested_nodes: String,
    pub keys_granted: String,
    pub revealed_secrets: String,
    pub started_at_ms: i64,
    pub last_action_at_ms: i64,
    pub completed_at_ms: Option<i64>,
    pub boss_defeated: bool,
    pub abandoned: bool,
    pub outcome: String,
    pub missed_passages: String,
}

/// Which column of a run row did not decode, and why.
#[derive(Debug)]
pub struct BadColumn {
    pub column: &'static str,
    pub error: serde_json::Error,
}

impl std::fmt::Display for BadColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad {} in a run row: {}", self.column, self.error)
    }
}

impl std::error::Error for BadColumn {}

impl RunColumns {
    /// The stored run these columns hold.
    pub fn decode(self) -> Result<StoredRun, BadColumn> {
        fn json<T: serde::de::DeserializeOwned>(
            column: &'static str,
            text: &str,
        ) -> Result<T, BadColumn> {
            serde_json::from_str(text).map_err(|error| BadColumn { column, error })
        }
        let mut node_choices: serde_json::Value = json("node_choices", &self.node_choices)?;
        let bad = |error| BadColumn {
            column: "node_choices",
            error,
        };
        let game: RunGame = match node_choices
            .as_object_mut()
            .and_then(|o| o.remove(GAME_KEY))
        {
            Some(v) => serde_json::from_value(v).map_err(bad)?,
            None => RunGame::default(),
        };
        let pending_fork: Option<PendingFork> = if node_choices
            .as_object()
            .is_none_or(|o| o.is_empty() || is_gogobee_choices(o))
        {
            // A fork in gogobee's shape is carried over by the warm-up
            // (`crate::db::warm_up_legacy`); one it could not carry stays as gogobee wrote it
            // and reads as no fork.
            None
        } else {
            Some(serde_json::from_value(node_choices).map_err(bad)?)
        };
        let outcome: Option<Outcome> = if self.outcome.is_empty() {
            None
        } else {
            Some(
                serde_json::from_value(self.outcome.into()).map_err(|error| BadColumn {
                    column: "outcome",
                    error,
                })?,
            )
        };
        Ok(StoredRun {
            id: self.id,
            user_id: self.user_id,
            version: self.version,
            link_token: self.link_token,
            run: Run {
                run_id: self.run_id,
                zone_id: self.zone_id,
                current_node: NodeId(self.current_node),
                visited_nodes: json("visited_nodes", &self.visited_nodes)?,
                pending_fork,
                cleared_regions: json("cleared_regions", &self.cleared_regions)?,
                harvested: json("harvested_nodes", &self.harvested_nodes)?,
                keys_granted: json("keys_granted", &self.keys_granted)?,
                revealed_secrets: json("revealed_secrets", &self.revealed_secrets)?,
                missed_passages: json("missed_passages", &self.missed_passages)?,
                encounter: game.encounter,
                wounds: game.wounds,
                xp_earned: game.xp_earned,
                loot: game.loot,
                last_check: game.last_check,
                started_at: self.started_at_ms,
                last_action_at: self.last_action_at_ms,
                completed_at: self.completed_at_ms,
                boss_defeated: self.boss_defeated,
                abandoned: self.abandoned,
                outcome,
            },
        })
    }
}

/// Reads a row selected with [`RUN_SELECT`].
pub fn run_from_row(r: &Row) -> rusqlite::Result<StoredRun> {
    let columns = RunColumns {
        id: r.get(0)?,
        user_id: r.get(1)?,
        version: r.get(2)?,
        link_token: r.get(3)?,
        run_id: r.get(4)?,
        zone_id: r.get(5)?,
        current_node: r.get(6)?,
        visited_nodes: r.get(7)?,
        node_choices: r.get(8)?,
        cleared_regions: r.get(9)?,
        harvested_nodes: r.get(10)?,
        keys_granted: r.get(11)?,
        revealed_secrets: r.get(12)?,
        started_at_ms: r.get(13)?,
        last_action_at_ms: r.get(14)?,
        completed_at_ms: r.get(15)?,
        boss_defeated: r.get(16)?,
        abandoned: r.get(17)?,
        outcome: r.get(18)?,
        missed_passages: r.get(19)?,
    };
    columns.decode().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
    })
}

/// The key of `node_choices` that holds a run's encounter state ([`RunGame`]) beside its
/// pending fork: the table has no column of its own for it, and gogobee's readers ignore it
/// (they look for `pending_at`).
const GAME_KEY: &str = "game";

/// A run's encounter state, stored under [`GAME_KEY`] in `node_choices` (absent while it is
/// all default, so the column reads as before).
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct RunGame {
    #[serde(skip_serializing_if = "Option::is_none")]
    encounter: Option<PendingEncounter>,
    #[serde(skip_serializing_if = "is_zero")]
    wounds: u32,
    #[serde(skip_serializing_if = "is_zero")]
    xp_earned: u32,
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    loot: BTreeSet<NodeId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_check: Option<EncounterCheck>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// `node_choices` of `run`: its pending fork (or `{}`), with its encounter state under
/// [`GAME_KEY`] when there is any.
fn node_choices(run: &Run) -> Result<String> {
    let mut v = match &run.pending_fork {
        Some(f) => serde_json::to_value(f)?,
        None => serde_json::Value::Object(serde_json::Map::new()),
    };
    let game = RunGame {
        encounter: run.encounter.clone(),
        wounds: run.wounds,
        xp_earned: run.xp_earned,
        loot: run.loot.clone(),
        last_check: run.last_check.clone(),
    };
    if game != RunGame::default()
        && let Some(o) = v.as_object_mut()
    {
        o.insert(GAME_KEY.into(), serde_json::to_value(&game)?);
    }
    Ok(serde_json::to_string(&v)?)
}

/// Whether `node_choices` is in gogobee's shape (`{"options": [...], "pending_at": ...}`) rather
/// than ours (a `PendingFork`, which has `at`).
pub fn is_gogobee_choices(o: &serde_json::Map<String, serde_json::Value>) -> bool {
    !o.contains_key("at") && (o.contains_key("pending_at") || o.contains_key("options"))
}

/// The columns of gogobee's `dnd_zone_run` that its readers use and that are not ours, written
/// beside ours while they exist so that a gogobee reader still sees every run's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyColumns {
    /// The room index of a linear run, and the room sequence (`'[]'` for a graph run).
    pub current_room: bool,
    pub room_seq_json: bool,
    /// gogobee's `DATETIME` columns (UTC text like `2026-01-02 03:04:05`). `completed_at` is
    /// what makes a run over for gogobee when it is neither won nor abandoned.
    pub started_at: bool,
    pub last_action_at: bool,
    pub completed_at: bool,
    /// How many rooms the run has entered (gogobee's count, the length of `visited_nodes`).
    pub rooms_traversed: bool,
}

/// Which of gogobee's columns `dnd_zone_run` has.
pub fn legacy_columns(conn: &Connection) -> Result<LegacyColumns> {
    let cols = super::columns(conn, "dnd_zone_run")?;
    let has = |name: &str| cols.iter().any(|c| c == name);
    Ok(LegacyColumns {
        current_room: has("current_room"),
        room_seq_json: has("room_seq_json"),
        started_at: has("started_at"),
        last_action_at: has("last_action_at"),
        completed_at: has("completed_at"),
        rooms_traversed: has("rooms_traversed"),
    })
}

/// Unix milliseconds (SQL parameter `?{p}`) as gogobee's DATETIME text, NULL stays NULL.
fn datetime_sql(p: usize) -> String {
    format!("CASE WHEN ?{p} IS NULL THEN NULL ELSE datetime(?{p} / 1000, 'unixepoch') END")
}

/// The column values of a run, in the order of [`RUN_WRITE_COLUMNS`].
pub(super) struct RunValues {
    pub(super) current_node: String,
    pub(super) visited: String,
    pub(super) choices: String,
    pub(super) cleared: String,
    pub(super) harvested: String,
    pub(super) keys: String,
    pub(super) revealed: String,
    pub(super) missed: String,
    pub(super) outcome: String,
    pub(super) fork_created: Option<i64>,
    /// Written beside `current_node` while the old columns exist, so an older bot reading the
    /// same database still finds the run.
    pub(super) current_room: i64,
}

pub(super) fn values(run: &Run) -> Result<RunValues> {
    Ok(RunValues {
        current_node: run.current_node.0.clone(),
        visited: serde_json::to_string(&run.visited_nodes)?,
        choices: node_choices(run)?,
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
pub fn insert_run(
    tx: &Connection,
    user: &str,
    run: &Run,
    legacy_cols: LegacyColumns,
) -> Result<StoredRun> {
    let v = values(run)?;
    let token = random_hex()?;
    let (mut legacy, mut legacy_vals) = (String::new(), String::new());
    let mut extra = |col: &str, val: String| {
        legacy.push_str(", ");
        legacy.push_str(col);
        legacy_vals.push_str(", ");
        legacy_vals.push_str(&val);
    };
    if legacy_cols.current_room {
        extra("current_room", "?19".into());
    }
    if legacy_cols.room_seq_json {
        extra("room_seq_json", "'[]'".into());
    }
    if legacy_cols.started_at {
        extra("started_at", datetime_sql(12));
    }
    if legacy_cols.last_action_at {
        extra("last_action_at", datetime_sql(13));
    }
    if legacy_cols.completed_at {
        extra("completed_at", datetime_sql(14));
    }
    if legacy_cols.rooms_traversed {
        extra("rooms_traversed", "json_array_length(?6)".into());
    }
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
    let all = params![
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
    ];
    // SQLite counts parameters up to the highest index (?21), so ?19 is bound even unused.
    st.execute(all)
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
    legacy_cols: LegacyColumns,
) -> Result<bool> {
    let v = values(run)?;
    let mut legacy = String::new();
    if legacy_cols.current_room {
        legacy.push_str(", current_room = ?18");
    }
    if legacy_cols.last_action_at {
        legacy.push_str(&format!(", last_action_at = {}", datetime_sql(10)));
    }
    if legacy_cols.completed_at {
        legacy.push_str(&format!(", completed_at = {}", datetime_sql(11)));
    }
    if legacy_cols.rooms_traversed {
        legacy.push_str(", rooms_traversed = json_array_length(?4)");
    }
    let sql = format!(
        "UPDATE dnd_zone_run SET current_node = ?3, visited_nodes = ?4, node_choices = ?5,
           cleared_regions = ?6, harvested_nodes = ?7, keys_granted = ?8, revealed_secrets = ?9,
           last_action_at_ms = ?10, completed_at_ms = ?11, completed = ?12, boss_defeated = ?13,
           abandoned = ?14, outcome = ?15, fork_created_at_ms = ?16, missed_passages = ?17,
           version = version + 1{legacy}
         WHERE rowid = ?1 AND version = ?2"
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
    let n = st.execute(&all[..if legacy_cols.current_room { 18 } else { 17 }])?;
    Ok(n == 1)
}

/// The player's active run, or else their latest one.
pub fn player_run(conn: &Connection, user: &str) -> Result<Option<StoredRun>> {
    let mut st = conn.prepare_cached(&format!(
        "{RUN_SELECT} WHERE user_id = ?1 AND current_node != ''
         ORDER BY (outcome = '') DESC, rowid DESC LIMIT 1"
    ))?;
    Ok(st.query_row([user], run_from_row).optional()?)
}

/// The run a link token names.
pub fn run_by_token(conn: &Connection, token: &str) -> Result<Option<StoredRun>> {
    let mut st = conn.prepare_cached(&format!("{RUN_SELECT} WHERE link_token = ?1"))?;
    Ok(st.query_row([token], run_from_row).optional()?)
}

/// The run of row `id`.
pub fn run_by_id(conn: &Connection, id: i64) -> Result<Option<StoredRun>> {
    let mut st = conn.prepare_cached(&format!("{RUN_SELECT} WHERE rowid = ?1"))?;
    Ok(st.query_row([id], run_from_row).optional()?)
}

/// Every run row (for checks and `zonegraph migrate`).
pub fn all_runs(conn: &Connection) -> Result<Vec<StoredRun>> {
    let mut st = conn.prepare(&format!(
        "{RUN_SELECT} WHERE current_node != '' ORDER BY rowid"
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
