//! Legacy runs (seed G4, G9c): warming gogobee rows up from `current_room`, and dropping
//! the old columns once nothing needs them.

use anyhow::{Result, bail};
use rusqlite::{Connection, params};
use zonegraph_core::engine::{self, Outcome};
use zonegraph_core::zone::Zone;

use super::{LEGACY_COLUMNS, columns, has_legacy_columns, update_run_cas};

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
                out.stuck.push((id, zone_id, refusal.to_string()));
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
