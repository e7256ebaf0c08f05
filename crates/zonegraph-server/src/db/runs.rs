//! Runs: `dnd_zone_run` rows read into the engine's runs, inserted, and written by
//! compare-and-set on their version.

use anyhow::Result;
use rusqlite::Connection;
use std::collections::BTreeSet;

use zonegraph_core::engine::{
    EncounterCheck, MetFork, Outcome, PendingEncounter, PendingFork, Run,
};
use zonegraph_core::zone::NodeId;

/// A run row: the engine's run plus what only the server keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    /// `dnd_zone_run.id`.
    pub id: i64,
    pub user_id: String,
    pub version: i64,
    pub link_token: String,
    /// The zone version the run started on (`zone_file_version.seq`; `None`: a run from
    /// before zone versions, played on the zone served).
    pub zone_file_seq: Option<i64>,
    pub run: Run,
}

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
    pub zone_file_seq: Option<i64>,
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
        let (game, pending_fork) = choices(&self.node_choices)?;
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
            zone_file_seq: self.zone_file_seq,
            run: Run {
                run_id: self.run_id,
                zone_id: self.zone_id,
                current_node: NodeId(self.current_node),
                visited_nodes: json("visited_nodes", &self.visited_nodes)?,
                pending_fork,
                forks_met: game.forks_met,
                level: game.level,
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
                visited_index: Default::default(),
            },
        })
    }
}

/// A run's encounter state and pending fork from its `node_choices` text, the state decoded
/// straight into its types in one pass ([`Choices`]); a text that is not an object goes
/// through [`choices_by_value`], which says what is wrong with it.
fn choices(text: &str) -> Result<(RunGame, Option<PendingFork>), BadColumn> {
    match serde_json::from_str::<Choices>(text) {
        Ok(Choices { game, fork }) => Ok((game, fork_of(fork).map_err(bad_choices)?)),
        Err(_) => choices_by_value(text),
    }
}

/// [`choices`] through a `serde_json::Value` of the whole text: the reading of record, which
/// [`choices`] must agree with (`choices_agree_with_the_reading_by_value`).
fn choices_by_value(text: &str) -> Result<(RunGame, Option<PendingFork>), BadColumn> {
    let mut node_choices: serde_json::Value = serde_json::from_str(text).map_err(bad_choices)?;
    let game: RunGame = match node_choices
        .as_object_mut()
        .and_then(|o| o.remove(GAME_KEY))
    {
        Some(v) => serde_json::from_value(v).map_err(bad_choices)?,
        None => RunGame::default(),
    };
    let fork = match node_choices {
        serde_json::Value::Object(o) => o,
        _ => serde_json::Map::new(),
    };
    Ok((game, fork_of(fork).map_err(bad_choices)?))
}

/// The pending fork of `node_choices` with its [`GAME_KEY`] taken out: none when it is empty
/// or in gogobee's shape. A fork in gogobee's shape is carried over by the warm-up
/// (`crate::db::warm_up_legacy`); one it could not carry stays as gogobee wrote it and reads
/// as no fork.
fn fork_of(
    fork: serde_json::Map<String, serde_json::Value>,
) -> Result<Option<PendingFork>, serde_json::Error> {
    if fork.is_empty() || is_gogobee_choices(&fork) {
        return Ok(None);
    }
    serde_json::from_value(serde_json::Value::Object(fork)).map(Some)
}

fn bad_choices(error: serde_json::Error) -> BadColumn {
    BadColumn {
        column: "node_choices",
        error,
    }
}

/// `node_choices` as an object: its [`GAME_KEY`] decoded as a [`RunGame`] directly (most of
/// the text: the forks met), every other key kept as a value for [`fork_of`]. Reading it
/// through a `serde_json::Value` first was most of a season's insight (BENCHMARKS.md, "A
/// season's data").
struct Choices {
    game: RunGame,
    fork: serde_json::Map<String, serde_json::Value>,
}

impl<'de> serde::Deserialize<'de> for Choices {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Choices, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = Choices;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Choices, A::Error> {
                let mut game = RunGame::default();
                let mut fork = serde_json::Map::new();
                while let Some(key) = m.next_key::<String>()? {
                    if key == GAME_KEY {
                        game = m.next_value()?;
                    } else {
                        let value = m.next_value()?;
                        fork.insert(key, value);
                    }
                }
                Ok(Choices { game, fork })
            }
        }
        d.deserialize_map(Keys)
    }
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
    /// The forks the run met and left ([`Run::forks_met`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    forks_met: Vec<MetFork>,
    /// The character's level at the start ([`Run::level`]).
    #[serde(skip_serializing_if = "is_zero")]
    level: u32,
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
        forks_met: run.forks_met.clone(),
        level: run.level,
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
    /// The run's length in rooms (`INTEGER NOT NULL`, no default, in gogobee's table): the
    /// rooms on the zone's longest entry-to-boss route, as gogobee's graph runs write it.
    pub total_rooms: bool,
    /// gogobee's characters (`dnd_character`) and their items (`adventure_inventory`, whose
    /// `in_vault` items do not count), read (never written) for a player's first sheet.
    pub characters: bool,
    pub inventory: bool,
    pub in_vault: bool,
}

/// Which of gogobee's columns `dnd_zone_run` has, and which of its character tables exist.
pub fn legacy_columns(conn: &Connection) -> Result<LegacyColumns> {
    let cols = super::columns(conn, "dnd_zone_run")?;
    let has = |name: &str| cols.iter().any(|c| c == name);
    let inventory = super::columns(conn, "adventure_inventory")?;
    Ok(LegacyColumns {
        current_room: has("current_room"),
        room_seq_json: has("room_seq_json"),
        started_at: has("started_at"),
        last_action_at: has("last_action_at"),
        completed_at: has("completed_at"),
        rooms_traversed: has("rooms_traversed"),
        total_rooms: has("total_rooms"),
        characters: !super::columns(conn, "dnd_character")?.is_empty(),
        inventory: !inventory.is_empty(),
        in_vault: inventory.iter().any(|c| c == "in_vault"),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass reading of `node_choices` gives what the reading through a value gives,
    /// or fails where it fails: ours with and without a fork and state, gogobee's shape,
    /// empty, not an object, a key twice, a bad state, a bad fork, broken text.
    #[test]
    fn choices_agree_with_the_reading_by_value() {
        let fork = r#""at":"b","created_at":42,"options":[{"to_node":"c","open":true,"check":{"lock":"none"}}]"#;
        let game = r#""game":{"wounds":1,"level":3,"forks_met":[{"at":"a","options":[],"taken":0,"picked":false}]}"#;
        let texts = [
            "{}".to_string(),
            format!("{{{fork}}}"),
            format!("{{{game}}}"),
            format!("{{{fork},{game}}}"),
            format!("{{{game},{fork}}}"),
            r#"{"options":[{"to":"x"}],"pending_at":"2026-01-01 00:00:00"}"#.to_string(),
            format!(r#"{{"options":[],"pending_at":1,{game}}}"#),
            r#"{"game":{"wounds":1},"game":{"wounds":2}}"#.to_string(),
            "null".to_string(),
            "[]".to_string(),
            "7".to_string(),
            r#"{"game":{"wounds":"many"}}"#.to_string(),
            r#"{"game":{"nonsense":1}}"#.to_string(),
            r#"{"at":"b"}"#.to_string(),
            r#"{"at":"b","created_at":1,"options":[],"extra":1}"#.to_string(),
            r#"{"game":"#.to_string(),
        ];
        let mut read_ok = 0;
        for text in &texts {
            let fast = choices(text);
            let by_value = choices_by_value(text);
            match (&fast, &by_value) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.0, b.0, "{text}");
                    assert_eq!(a.1, b.1, "{text}");
                    read_ok += 1;
                }
                (Err(_), Err(_)) => {}
                _ => panic!(
                    "{text}: one pass {:?}, by value {:?}",
                    fast.is_ok(),
                    by_value.is_ok()
                ),
            }
        }
        // Both kinds are among the cases: the check is not vacuous.
        assert!(read_ok >= 8 && read_ok < texts.len(), "{read_ok} read");
        assert_eq!(choices(&texts[7]).ok().map(|c| c.0.wounds), Some(2));
        assert!(
            choices(&format!("{{{fork},{game}}}")).is_ok_and(|c| c.1.is_some() && c.0.level == 3)
        );
    }
}
