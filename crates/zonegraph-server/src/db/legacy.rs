//! Legacy runs (seed G4, G9c): warming gogobee rows up from `current_room`, and dropping
//! the old columns once nothing needs them.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};
use rusqlite::{Connection, params};
use zonegraph_core::engine::{self, Outcome, Run};
use zonegraph_core::zone::Zone;

use super::{LEGACY_COLUMNS, columns, has_legacy_columns, run_by_id, update_run_cas};

/// What warming up the legacy rows did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WarmUp {
    pub warmed: usize,
    /// Rows that could not be warmed up: `(id, zone_id, why)`. Kept as they are.
    pub stuck: Vec<(i64, String, String)>,
    /// Active runs abandoned because their player had a newer one (one active run each).
    pub abandoned: Vec<Superseded>,
}

impl WarmUp {
    /// What the warm-up did, one line each, for the operator.
    pub fn report(&self) -> Vec<String> {
        let mut out = vec![format!(
            "warmed up {} legacy run{}",
            self.warmed,
            if self.warmed == 1 { "" } else { "s" }
        )];
        for (id, zone, why) in &self.stuck {
            out.push(format!(
                "kept legacy run row {id} (zone {zone}) as it is: {why}"
            ));
        }
        for s in &self.abandoned {
            out.push(format!(
                "abandoned run {} (row {}) of {}: a player has one active run, and row {} is newer",
                s.run_id, s.id, s.user_id, s.kept_id
            ));
        }
        out
    }
}

/// An active run ended by the warm-up: its player had a newer active run.
#[derive(Debug, PartialEq, Eq)]
pub struct Superseded {
    /// `dnd_zone_run.id` and the run id.
    pub id: i64,
    pub run_id: String,
    pub user_id: String,
    /// The row that stays active.
    pub kept_id: i64,
}

/// A legacy row warmed up, not yet written.
struct Warmed {
    id: i64,
    user_id: String,
    started_ms: i64,
    run: Run,
}

/// Fills current_node and the rest of the run state from current_room for every legacy row
/// that has none yet (seed G4), with the zones loaded from the tables. Rows whose zone is
/// unknown or whose room index does not fit are left untouched and reported. A player left
/// with more than one active run keeps the newest (highest row id); the older ones are
/// abandoned at `now` and reported. A row that cannot be written is named in the error.
pub fn warm_up_legacy(conn: &mut Connection, zones: &[Zone], now: i64) -> Result<WarmUp> {
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
    let rows: Vec<(i64, String, String, String, i64, i64, String)> = {
        let mut st = tx.prepare(&format!(
            "SELECT id, run_id, user_id, zone_id, current_room, COALESCE({started}, 0), outcome
             FROM dnd_zone_run WHERE current_node = '' ORDER BY id"
        ))?;
        st.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                r.get::<_, Option<i64>>(5)?.unwrap_or(0),
                r.get(6)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let mut warmed = Vec::new();
    for (id, run_id, user_id, zone_id, current_room, started_s, outcome) in rows {
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
        warmed.push(Warmed {
            id,
            user_id,
            started_ms,
            run,
        });
    }

    // One active run per player: the newest of the warmed and the already active rows.
    let mut active: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    {
        let mut st = tx.prepare(
            "SELECT id, user_id FROM dnd_zone_run WHERE current_node != '' AND outcome = ''",
        )?;
        for row in st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
            let (id, user) = row?;
            active.entry(user).or_default().push(id);
        }
    }
    for w in warmed.iter().filter(|w| w.run.outcome.is_none()) {
        active.entry(w.user_id.clone()).or_default().push(w.id);
    }
    let mut superseded: BTreeMap<i64, i64> = BTreeMap::new();
    for ids in active.values() {
        let kept = ids.iter().copied().max().unwrap_or_default();
        for &id in ids.iter().filter(|&&id| id != kept) {
            superseded.insert(id, kept);
        }
    }

    // Rows already warm that lose their place are ended first, so that the unique index of
    // active runs never sees two.
    let warmed_ids: Vec<i64> = warmed.iter().map(|w| w.id).collect();
    for (&id, &kept_id) in superseded.iter().filter(|(id, _)| !warmed_ids.contains(id)) {
        let Some(mut row) = run_by_id(&tx, id)? else {
            continue;
        };
        let write = engine::abandon_without_zone(&mut row.run, now)
            .map_err(|r| anyhow::anyhow!("{}", zonegraph_core::chat::refusal(&r).text))
            .and_then(|()| update_run_cas(&tx, row.id, row.version, &row.run, true));
        match write {
            Ok(true) => {}
            Ok(false) => bail!(
                "legacy warm-up: run {} (row {id}) changed meanwhile",
                row.run.run_id
            ),
            Err(e) => {
                return Err(e.context(format!(
                    "legacy warm-up: cannot abandon run {} (row {id})",
                    row.run.run_id
                )));
            }
        }
        out.abandoned.push(Superseded {
            id,
            run_id: row.run.run_id,
            user_id: row.user_id,
            kept_id,
        });
    }
    for mut w in warmed {
        if let Some(&kept_id) = superseded.get(&w.id) {
            // Cannot fail: the run is not over (it is among the active ones).
            let _ = engine::abandon_without_zone(&mut w.run, now);
            out.abandoned.push(Superseded {
                id: w.id,
                run_id: w.run.run_id.clone(),
                user_id: w.user_id.clone(),
                kept_id,
            });
        }
        write_warmed(&tx, &w).with_context(|| {
            format!(
                "legacy warm-up: cannot write run {} (row {})",
                w.run.run_id, w.id
            )
        })?;
        out.warmed += 1;
    }
    tx.commit()?;
    out.abandoned.sort_by_key(|s| s.id);
    Ok(out)
}

fn write_warmed(tx: &Connection, w: &Warmed) -> Result<()> {
    let version: i64 = tx.query_row(
        "SELECT version FROM dnd_zone_run WHERE id = ?1",
        [w.id],
        |r| r.get(0),
    )?;
    tx.execute(
        "UPDATE dnd_zone_run SET started_at_ms = ?2 WHERE id = ?1",
        params![w.id, w.started_ms],
    )?;
    if !update_run_cas(tx, w.id, version, &w.run, true)? {
        bail!("the row changed while warming it up");
    }
    Ok(())
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
