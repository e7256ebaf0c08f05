//! Runs gogobee (the chat bot before zones were graphs) wrote: warming linear rows up from
//! `current_room`, carrying gogobee's pending forks into ours, one active run per player, and
//! dropping the old columns once nothing needs them.
//!
//! gogobee's `dnd_zone_run` is keyed by `run_id TEXT` and has no integer `id`; every query here
//! uses `rowid`, which is our table's `id` and exists in gogobee's too.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};
use rusqlite::{Connection, params};
use zonegraph_core::engine::{self, Check, ForkOption, Outcome, PendingFork, Run};
use zonegraph_core::format::LockKind;
use zonegraph_core::zone::{Lock, NodeId, Zone};

use super::Tx;
use super::{
    LEGACY_COLUMNS, LegacyColumns, columns, ensure_active_index, is_gogobee_choices, legacy_columns,
};

/// What warming up the legacy rows did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WarmUp {
    pub warmed: usize,
    /// Pending forks carried over from gogobee's `node_choices`.
    pub forks: usize,
    /// Rows that cannot be carried. Kept as they are.
    pub stuck: Vec<Stuck>,
    /// Active runs abandoned because their player had a newer one (one active run each).
    pub abandoned: Vec<Superseded>,
}

/// A row the warm-up cannot carry, left as it is.
#[derive(Debug, PartialEq, Eq)]
pub struct Stuck {
    pub run_id: String,
    pub zone_id: String,
    pub why: String,
}

impl WarmUp {
    /// What the warm-up did, one line each, for the operator.
    pub fn report(&self) -> Vec<String> {
        let mut out = vec![format!(
            "warmed up {} legacy run{}",
            self.warmed,
            if self.warmed == 1 { "" } else { "s" }
        )];
        if self.forks > 0 {
            out.push(format!(
                "carried {} pending fork{} over from gogobee's node_choices",
                self.forks,
                if self.forks == 1 { "" } else { "s" }
            ));
        }
        for s in &self.stuck {
            out.push(format!(
                "kept run {} (zone {}) as it is: {}",
                s.run_id, s.zone_id, s.why
            ));
        }
        for s in &self.abandoned {
            out.push(format!(
                "abandoned run {} (row {}) of {}: a player has one active run, and run {} is newer",
                s.run_id, s.id, s.user_id, s.kept_run_id
            ));
        }
        out
    }
}

/// An active run ended by the warm-up: its player had a newer active run.
#[derive(Debug, PartialEq, Eq)]
pub struct Superseded {
    /// The row (`rowid`) and the run id.
    pub id: i64,
    pub run_id: String,
    pub user_id: String,
    /// The run that stays active.
    pub kept_run_id: String,
}

/// A legacy row warmed up, not yet written.
struct Warmed {
    id: i64,
    user_id: String,
    started_ms: i64,
    run: Run,
}

/// A cold row: gogobee's linear run, known by `current_room` only.
struct Cold {
    id: i64,
    run_id: String,
    user_id: String,
    zone_id: String,
    current_room: i64,
    started_ms: i64,
    last_action_ms: i64,
    completed_ms: Option<i64>,
    outcome: String,
}

/// A warm row as gogobee or we left it, before it is checked.
struct WarmRow {
    id: i64,
    run_id: String,
    zone_id: String,
    current_node: String,
    visited: String,
    choices: String,
}

/// Brings every run row to a state the engine can play, at each stage of gogobee's schema,
/// without dropping a row:
///
/// - a cold row (no `current_node`) is warmed up from `current_room`;
/// - a warm row whose zone or node the tables do not know is reported and left untouched;
/// - a pending fork in gogobee's `node_choices` shape becomes ours ([`carry_fork`]);
/// - a player left with more than one active run keeps the newest (highest row); the older
///   ones are abandoned at `now` and reported.
///
/// Idempotent: a second call changes nothing (it reports the rows it still cannot carry).
/// A row that cannot be written is named in the error.
pub fn warm_up_legacy(conn: &mut Connection, zones: &[Zone], now: i64) -> Result<WarmUp> {
    let mut out = WarmUp::default();
    let cols = legacy_columns(conn)?;
    let tx = conn.transaction()?;
    let zone_of = |id: &str| zones.iter().find(|z| z.id == id);

    let mut warmed = Vec::new();
    let colds = if cols.current_room {
        cold_rows(&tx)?
    } else {
        Vec::new()
    };
    for c in colds {
        let Some(zone) = zone_of(&c.zone_id) else {
            out.stuck.push(Stuck {
                why: format!("zone {} is not loaded", c.zone_id),
                run_id: c.run_id,
                zone_id: c.zone_id,
            });
            continue;
        };
        if !zone.legacy {
            // Room ids `<zone>.r<n>` exist only in a zone given as a room_kinds list; which
            // room of a graph a linear index meant is not known.
            out.stuck.push(Stuck {
                why: format!(
                    "zone {} is a graph, and current_room {} names a room only in a zone given \
                     as room_kinds",
                    c.zone_id, c.current_room
                ),
                run_id: c.run_id,
                zone_id: c.zone_id,
            });
            continue;
        }
        let Ok(room) = usize::try_from(c.current_room) else {
            out.stuck.push(Stuck {
                why: format!("current_room {} is negative", c.current_room),
                run_id: c.run_id,
                zone_id: c.zone_id,
            });
            continue;
        };
        let mut run = match engine::warm_up_legacy(zone, &c.run_id, room, c.started_ms) {
            Ok(run) => run,
            Err(refusal) => {
                out.stuck.push(Stuck {
                    why: zonegraph_core::chat::refusal(&refusal).text,
                    run_id: c.run_id,
                    zone_id: c.zone_id,
                });
                continue;
            }
        };
        // gogobee's last action stays what it was (the update writes it back for gogobee).
        run.last_action_at = run.last_action_at.max(c.last_action_ms);
        let ended = c.completed_ms.unwrap_or(run.last_action_at);
        match c.outcome.as_str() {
            "victory" => {
                run.outcome = Some(Outcome::Victory);
                run.boss_defeated = true;
                run.completed_at = Some(ended);
                run.last_action_at = ended;
            }
            "abandoned" => {
                run.outcome = Some(Outcome::Abandoned);
                run.abandoned = true;
                run.completed_at = Some(ended);
                run.last_action_at = ended;
            }
            "dead_end" => {
                run.outcome = Some(Outcome::DeadEnd);
                run.completed_at = Some(ended);
                run.last_action_at = ended;
            }
            _ => {}
        }
        warmed.push(Warmed {
            id: c.id,
            user_id: c.user_id,
            started_ms: c.started_ms,
            run,
        });
    }

    // Warm rows: gogobee's after its first phase, or ours.
    let mut forks = Vec::new();
    for w in warm_rows(&tx)? {
        match check_warm(zone_of(&w.zone_id), &w) {
            Ok(Some(choices)) => forks.push((w, choices)),
            Ok(None) => {}
            Err(why) => out.stuck.push(Stuck {
                run_id: w.run_id,
                zone_id: w.zone_id,
                why,
            }),
        }
    }
    for (w, choices) in forks {
        let Some(mut row) = Tx::new(&*tx, cols).run_by_id(w.id)? else {
            continue;
        };
        let zone = zone_of(&w.zone_id).context("checked above")?;
        match carry_fork(zone, &mut row.run, &choices, now) {
            Ok(carried) => out.forks += usize::from(carried),
            Err(why) => {
                out.stuck.push(Stuck {
                    run_id: w.run_id,
                    zone_id: w.zone_id,
                    why,
                });
                continue;
            }
        }
        if !Tx::new(&*tx, cols).update_run_cas(row.id, row.version, &row.run)? {
            bail!("legacy warm-up: run {} changed meanwhile", w.run_id);
        }
    }

    // One active run per player: the newest of the warmed and the already active rows, by
    // gogobee's rule (its active run is the latest `started_at`; the row order breaks a tie).
    // Per player: ((started_at_ms, rowid), run id) of each active run.
    type Started = ((i64, i64), String);
    let mut active: BTreeMap<String, Vec<Started>> = BTreeMap::new();
    {
        let mut st = tx.prepare(
            "SELECT rowid, user_id, run_id, started_at_ms FROM dnd_zone_run
             WHERE current_node != '' AND outcome = ''",
        )?;
        for row in st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })? {
            let (id, user, run_id, started) = row?;
            active
                .entry(user)
                .or_default()
                .push(((started, id), run_id));
        }
    }
    for w in warmed.iter().filter(|w| w.run.outcome.is_none()) {
        active
            .entry(w.user_id.clone())
            .or_default()
            .push(((w.started_ms, w.id), w.run.run_id.clone()));
    }
    let mut superseded: BTreeMap<i64, String> = BTreeMap::new();
    for runs in active.values() {
        let Some(kept) = runs.iter().max_by_key(|(at, _)| *at) else {
            continue;
        };
        for ((_, id), _) in runs.iter().filter(|(at, _)| *at != kept.0) {
            superseded.insert(*id, kept.1.clone());
        }
    }

    // Rows already warm that lose their place are ended first, so that the unique index of
    // active runs never sees two. Only the status columns change (ours and gogobee's), so a
    // row that cannot be carried keeps the rest as it was.
    let warmed_ids: Vec<i64> = warmed.iter().map(|w| w.id).collect();
    for (&id, kept) in superseded.iter().filter(|(id, _)| !warmed_ids.contains(id)) {
        let (run_id, user_id): (String, String) = tx.query_row(
            "SELECT run_id, user_id FROM dnd_zone_run WHERE rowid = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        abandon_row(&tx, id, now, cols)
            .with_context(|| format!("legacy warm-up: cannot abandon run {run_id} (row {id})"))?;
        out.abandoned.push(Superseded {
            id,
            run_id,
            user_id,
            kept_run_id: kept.clone(),
        });
    }
    for mut w in warmed {
        if let Some(kept) = superseded.get(&w.id) {
            // Cannot fail: the run is not over (it is among the active ones).
            let _ = engine::abandon_without_zone(&mut w.run, now);
            out.abandoned.push(Superseded {
                id: w.id,
                run_id: w.run.run_id.clone(),
                user_id: w.user_id.clone(),
                kept_run_id: kept.clone(),
            });
        }
        write_warmed(&tx, &w, cols).with_context(|| {
            format!(
                "legacy warm-up: cannot write run {} (row {})",
                w.run.run_id, w.id
            )
        })?;
        out.warmed += 1;
    }
    ensure_active_index(&tx)?;
    tx.commit()?;
    out.abandoned.sort_by_key(|s| s.id);
    Ok(out)
}

fn cold_rows(tx: &Connection) -> Result<Vec<Cold>> {
    let mut st = tx.prepare(
        "SELECT rowid, run_id, user_id, zone_id, current_room, started_at_ms, last_action_at_ms,
           completed_at_ms, outcome
         FROM dnd_zone_run WHERE current_node = '' ORDER BY rowid",
    )?;
    let rows = st
        .query_map([], |r| {
            Ok(Cold {
                id: r.get(0)?,
                run_id: r.get(1)?,
                user_id: r.get(2)?,
                zone_id: r.get(3)?,
                current_room: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                started_ms: r.get(5)?,
                last_action_ms: r.get(6)?,
                completed_ms: r.get(7)?,
                outcome: r.get(8)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

fn warm_rows(tx: &Connection) -> Result<Vec<WarmRow>> {
    let mut st = tx.prepare(
        "SELECT rowid, run_id, zone_id, current_node, visited_nodes, node_choices
         FROM dnd_zone_run WHERE current_node != '' ORDER BY rowid",
    )?;
    let rows = st
        .query_map([], |r| {
            Ok(WarmRow {
                id: r.get(0)?,
                run_id: r.get(1)?,
                zone_id: r.get(2)?,
                current_node: r.get(3)?,
                visited: r.get(4)?,
                choices: r.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Whether a warm row can be played: its zone and nodes exist and `node_choices` is ours.
/// `Ok(Some(..))`: gogobee's `node_choices` to carry; `Err`: why the row stays as it is.
fn check_warm(zone: Option<&Zone>, w: &WarmRow) -> Result<Option<GogobeeChoices>, String> {
    let Some(zone) = zone else {
        return Err(format!("zone {} is not loaded", w.zone_id));
    };
    let known = |id: &str| zone.node_index(id).is_some();
    if !known(&w.current_node) {
        return Err(format!(
            "node {} is not in zone {}",
            w.current_node, w.zone_id
        ));
    }
    let visited: Vec<String> = serde_json::from_str(&w.visited)
        .map_err(|e| format!("visited_nodes is not a list of node ids: {e}"))?;
    if let Some(bad) = visited.iter().find(|v| !known(v)) {
        return Err(format!("visited node {bad} is not in zone {}", w.zone_id));
    }
    let choices: serde_json::Value =
        serde_json::from_str(&w.choices).map_err(|e| format!("node_choices is not JSON: {e}"))?;
    match choices.as_object() {
        Some(o) if is_gogobee_choices(o) => serde_json::from_value(choices)
            .map(Some)
            .map_err(|e| format!("node_choices is not a fork gogobee wrote: {e}")),
        Some(_) => Ok(None),
        None => Err("node_choices is not a JSON object".into()),
    }
}

/// gogobee's `node_choices`: the fork's menu and where it waits (no `pending_at`, or `{}`: no
/// fork pending).
#[derive(Debug, serde::Deserialize)]
struct GogobeeChoices {
    #[serde(default)]
    options: Vec<GogobeeOption>,
    #[serde(default)]
    pending_at: Option<String>,
}

/// One option of gogobee's menu. Also `hint`, `index`, `label` and `reason`, which the zone
/// and the engine give again.
#[derive(Debug, serde::Deserialize)]
struct GogobeeOption {
    to: String,
    #[serde(default)]
    unlocked: bool,
}

/// Turns gogobee's pending fork into ours on `run`; `Ok(false)` when none was pending (the
/// column then becomes `{}`).
///
/// gogobee kept whether each option was unlocked, not the roll. Rather than roll again (the
/// player has already seen gogobee's menu, and a new roll could shut an option they were
/// shown open), the outcome is frozen: each option gets its passage's lock from the zone with
/// values that reproduce `unlocked` — a d20 of 20 (with any bonus the DC needs) or of 1 (with
/// a malus under the DC), a key held or not, the level just at or under the minimum, the
/// region cleared or not. A passage without a lock is `Check::None` when unlocked, and a
/// never-opening `Check::Invalid` otherwise. Failed perception passages are remembered as
/// missed, as the engine does. The fork is offered anew at `now`, so the fork timeout counts
/// from the migration rather than from a time gogobee did not keep.
fn carry_fork(zone: &Zone, run: &mut Run, g: &GogobeeChoices, now: i64) -> Result<bool, String> {
    let Some(at) = g.pending_at.as_deref().filter(|a| !a.is_empty()) else {
        run.pending_fork = None;
        return Ok(false);
    };
    let Some(at_ix) = zone.node_index(at) else {
        return Err(format!("fork node {at} is not in zone {}", zone.id));
    };
    if at != run.current_node.as_str() {
        return Err(format!(
            "the pending fork is at {at}, the run at {}",
            run.current_node.as_str()
        ));
    }
    let exits = zone.exits(at_ix);
    if let Some(o) = g.options.iter().find(|o| {
        !exits
            .iter()
            .any(|&e| zone.node(zone.target(e)).id.as_str() == o.to)
    }) {
        return Err(format!("fork option {} is not a passage from {at}", o.to));
    }
    let mut options = Vec::with_capacity(exits.len());
    for e in exits {
        let to = zone.node(zone.target(e)).id.clone();
        let Some(o) = g.options.iter().find(|o| o.to == to.as_str()) else {
            return Err(format!(
                "the fork at {at} offers no option to {}",
                to.as_str()
            ));
        };
        let check = frozen_check(&zone.graph[e].lock, o.unlocked);
        if check.lock_kind() == LockKind::PerceptionCheck {
            let passage = (NodeId(at.to_string()), to.clone());
            if check.passes() {
                run.missed_passages.remove(&passage);
            } else {
                run.missed_passages.insert(passage);
            }
        }
        options.push(ForkOption {
            to_node: to,
            open: check.passes(),
            check,
            revealed: false,
        });
    }
    run.pending_fork = Some(PendingFork {
        at: NodeId(at.to_string()),
        created_at: now,
        options,
    });
    Ok(true)
}

/// A check of `lock` whose outcome is `unlocked` (see [`carry_fork`]).
fn frozen_check(lock: &Lock, unlocked: bool) -> Check {
    let roll = |dc: u32| {
        let dc = i32::try_from(dc).unwrap_or(i32::MAX);
        if unlocked {
            (20, (dc - 20).max(0))
        } else {
            (1, (dc - 2).min(0))
        }
    };
    match lock {
        Lock::None if unlocked => Check::None,
        Lock::None => Check::Invalid {
            lock_kind: LockKind::None,
        },
        Lock::PerceptionCheck { dc } => {
            let (d20, modifier) = roll(*dc);
            Check::PerceptionCheck {
                d20,
                modifier,
                dc: *dc,
            }
        }
        Lock::StatCheck { ability, dc } => {
            let (d20, modifier) = roll(*dc);
            Check::StatCheck {
                ability: *ability,
                d20,
                modifier,
                dc: *dc,
            }
        }
        Lock::KeyRequired { key_id } => Check::KeyRequired {
            key_id: key_id.clone(),
            held: unlocked,
        },
        Lock::LevelMin { min_level } => Check::LevelMin {
            min_level: *min_level,
            level: if unlocked {
                *min_level
            } else {
                min_level.saturating_sub(1)
            },
        },
        Lock::RegionClear { region_id } => Check::RegionClear {
            region_id: region_id.clone(),
            cleared: unlocked,
        },
        Lock::Invalid { lock_kind } => Check::Invalid {
            lock_kind: *lock_kind,
        },
    }
}

/// Ends row `id` as abandoned at `now`: our status columns and gogobee's, nothing else.
fn abandon_row(tx: &Connection, id: i64, now: i64, cols: LegacyColumns) -> Result<()> {
    let mut sql = String::from(
        "UPDATE dnd_zone_run SET outcome = 'abandoned', abandoned = 1, completed = 1,
           completed_at_ms = ?2, last_action_at_ms = ?2, fork_created_at_ms = NULL,
           version = version + 1",
    );
    if cols.completed_at {
        sql.push_str(", completed_at = datetime(?2 / 1000, 'unixepoch')");
    }
    if cols.last_action_at {
        sql.push_str(", last_action_at = datetime(?2 / 1000, 'unixepoch')");
    }
    sql.push_str(" WHERE rowid = ?1");
    tx.execute(&sql, params![id, now])?;
    Ok(())
}

fn write_warmed(tx: &Connection, w: &Warmed, cols: LegacyColumns) -> Result<()> {
    let version: i64 = tx.query_row(
        "SELECT version FROM dnd_zone_run WHERE rowid = ?1",
        [w.id],
        |r| r.get(0),
    )?;
    tx.execute(
        "UPDATE dnd_zone_run SET started_at_ms = ?2 WHERE rowid = ?1",
        params![w.id, w.started_ms],
    )?;
    if !Tx::new(tx, cols).update_run_cas(w.id, version, &w.run)? {
        bail!("the row changed while warming it up");
    }
    Ok(())
}

/// Drops `current_room` and `room_seq_json` once no reader needs them. Idempotent: a database without them
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
    let cold: Vec<String> = {
        let mut st =
            conn.prepare("SELECT run_id FROM dnd_zone_run WHERE current_node = '' ORDER BY rowid")?;
        st.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    if !cold.is_empty() {
        bail!(
            "cannot drop the legacy columns: {} run row{} still need current_room (runs {}); \
             `zonegraph migrate --zones DIR` says why each cannot be warmed up",
            cold.len(),
            if cold.len() == 1 { "" } else { "s" },
            cold.join(", ")
        );
    }
    // Irreversible: a copy first, beside the database.
    super::keep_a_copy(conn, "pre-purge")?;
    let tx = conn.transaction()?;
    for c in present {
        tx.execute_batch(&format!("ALTER TABLE dnd_zone_run DROP COLUMN {c}"))?;
    }
    tx.commit()?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use zonegraph_core::zone::{Ability, DC_RANGE, Lock};

    use super::frozen_check;

    /// Whatever the lock and its data, the frozen check opens exactly when gogobee said.
    #[test]
    fn a_frozen_check_reproduces_gogobees_outcome() {
        let mut locks = vec![
            Lock::None,
            Lock::KeyRequired {
                key_id: "skull_key".into(),
            },
            Lock::RegionClear {
                region_id: "upper".into(),
            },
        ];
        // A zone's DCs are within DC_RANGE (others load as an invalid lock).
        for dc in DC_RANGE {
            locks.push(Lock::PerceptionCheck { dc });
            locks.push(Lock::StatCheck {
                ability: Ability::Str,
                dc,
            });
        }
        for min_level in [0, 1, 5, 20, u32::MAX] {
            locks.push(Lock::LevelMin { min_level });
        }
        for lock in &locks {
            for unlocked in [true, false] {
                let check = frozen_check(lock, unlocked);
                // A level minimum of 0 is met by every level: it cannot be shut.
                let expect = unlocked || matches!(lock, Lock::LevelMin { min_level: 0 });
                assert_eq!(check.passes(), expect, "{lock:?} unlocked={unlocked}");
                assert_eq!(check.lock_kind(), lock.kind(), "{lock:?}");
            }
        }
    }
}
