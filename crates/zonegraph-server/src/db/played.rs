//! The runs of one zone version, for play insight: those still in the run table and those
//! moved to the history (`zone_run_history`, which keeps a run's way through the zone since
//! schema 13; older history rows have none and are left out). Only the runs: no player id
//! leaves this module.

use anyhow::Result;
use zonegraph_core::engine::Run;

use super::sql::vals;
use super::{RowRef, RunColumns, Tx};

/// Only the columns insight and review read (the others are JSON they would parse for
/// nothing).
const COLUMNS: &str = "run_id, current_node, visited_nodes, node_choices, started_at_ms,
                       completed_at_ms, outcome, boss_defeated, abandoned";

/// Which stored runs of a version: `since` as for insight, and for review only the most
/// recent ended ones.
const FILTER: &str = "WHERE zone_id = ?1 AND zone_file_seq = ?2 AND current_node != ''
                        AND started_at_ms >= ?3";

/// How many runs [`Tx::recent_version_runs`] decodes between two questions to its `stop`.
pub const STOP_EVERY: usize = 256;

/// The runs a review replays: the runs still going (every one: they are the players now)
/// and the most recent ended ones, with how many ended ones were left out (the version's
/// rows not read, legacy rows with no room among them).
#[derive(Debug, Default)]
pub struct RecentRuns {
    pub runs: Vec<Run>,
    /// Ended runs of the version older than the ones read.
    pub left_out: u64,
}

impl Tx<'_> {
    /// The runs of `zone_id`'s version `seq` started at or after `since` (Unix ms), handed to
    /// `each` one at a time as they are decoded (a season's runs are never all held), the
    /// run table's then the history's, in no order: insight's tally does not depend on it
    /// ([`zonegraph_core::insight::Tally`]), and a sort of a season's rows cost more than the
    /// rest of the read (BENCHMARKS.md). What insight reads of them (where each went and how
    /// it ended), the rest left empty; how many runs were read.
    pub fn each_version_run(
        &mut self,
        zone_id: &str,
        seq: i64,
        since: i64,
        each: &mut dyn FnMut(Run),
    ) -> Result<u64> {
        let mut n = 0;
        for table in ["dnd_zone_run", "zone_run_history"] {
            self.conn.each_row(
                &format!("SELECT {COLUMNS} FROM {table} {FILTER}"),
                &vals![zone_id, seq, since],
                &mut |r| {
                    each(decode(zone_id, seq, r)?);
                    n += 1;
                    Ok(())
                },
            )?;
        }
        Ok(n)
    }

    /// What a review of `zone_id`'s version `seq` replays: every run going (the players
    /// now), and the `limit` ended runs that started last, of the run table's and the
    /// history's together, with how many ended runs were left out. In the order they started.
    /// `None` when `stop` says so (asked every [`STOP_EVERY`] runs read).
    pub fn recent_version_runs(
        &mut self,
        zone_id: &str,
        seq: i64,
        limit: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<RecentRuns>> {
        let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
        let key = self.conn.run_key();
        let recent = "ORDER BY started_at_ms DESC, run_id DESC LIMIT ?4";
        let at = vals![zone_id, seq, 0_i64, limit_sql];
        let mut rows = self.conn.query(
            &format!("SELECT {COLUMNS} FROM dnd_zone_run {FILTER} AND outcome = '' ORDER BY {key}"),
            &at[..3],
        )?;
        let going = rows.len();
        rows.extend(self.conn.query(
            &format!("SELECT {COLUMNS} FROM dnd_zone_run {FILTER} AND outcome != '' {recent}"),
            &at,
        )?);
        rows.extend(self.conn.query(
            &format!("SELECT {COLUMNS} FROM zone_run_history {FILTER} {recent}"),
            &at,
        )?);
        // Ended runs in all, counted from the version's index alone (`SCHEMA_V15`): every row
        // of the version but the runs going; the history holds ended runs only.
        let mut ended = -i64::try_from(going).unwrap_or(0);
        for table in ["dnd_zone_run", "zone_run_history"] {
            let n = self.conn.query(
                &format!("SELECT count(*) FROM {table} WHERE zone_id = ?1 AND zone_file_seq = ?2"),
                &at[..2],
            )?;
            ended += n
                .first()
                .ok_or_else(|| anyhow::anyhow!("a count gave no row"))?
                .int(0)?;
        }
        let mut runs = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            if i % STOP_EVERY == 0 && stop() {
                return Ok(None);
            }
            runs.push(decode(zone_id, seq, r)?);
        }
        // Of the ended runs read (up to `limit` from each table), the `limit` most recent.
        let mut recent_ended = runs.split_off(going);
        recent_ended.sort_by(|a, b| (b.started_at, &b.run_id).cmp(&(a.started_at, &a.run_id)));
        recent_ended.truncate(limit);
        let left_out = u64::try_from(ended)
            .unwrap_or(0)
            .saturating_sub(recent_ended.len() as u64);
        runs.extend(recent_ended);
        runs.sort_by(|a, b| (a.started_at, &a.run_id).cmp(&(b.started_at, &b.run_id)));
        Ok(Some(RecentRuns { runs, left_out }))
    }
}

/// One row of [`COLUMNS`] as a run.
fn decode(zone_id: &str, seq: i64, r: &dyn RowRef) -> Result<Run> {
    let columns = RunColumns {
        id: 0,
        user_id: String::new(),
        version: 0,
        link_token: String::new(),
        run_id: r.str(0)?.to_owned(),
        zone_id: zone_id.to_string(),
        current_node: r.str(1)?.to_owned(),
        visited_nodes: r.str(2)?.to_owned(),
        node_choices: r.str(3)?.to_owned(),
        cleared_regions: "[]".into(),
        harvested_nodes: "{}".into(),
        keys_granted: "[]".into(),
        revealed_secrets: "[]".into(),
        started_at_ms: r.int(4)?,
        last_action_at_ms: r.opt_int(5)?.unwrap_or(0),
        completed_at_ms: r.opt_int(5)?,
        boss_defeated: r.flag(7)?,
        abandoned: r.flag(8)?,
        outcome: r.str(6)?.to_owned(),
        missed_passages: "[]".into(),
        zone_file_seq: Some(seq),
    };
    Ok(columns.decode()?.run)
}
