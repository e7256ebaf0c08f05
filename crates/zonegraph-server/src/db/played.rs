//! The runs of one zone version, for play insight: those still in the run table and those
//! moved to the history (`zone_run_history`, which keeps a run's way through the zone since
//! schema 13; older history rows have none and are left out). Only the runs: no player id
//! leaves this module.

use anyhow::Result;
use zonegraph_core::engine::Run;

use super::sql::vals;
use super::{RunColumns, Tx};

impl Tx<'_> {
    /// The runs of `zone_id`'s version `seq` started at or after `since` (Unix ms), the run
    /// table's first, then the history's, each in the order they were stored: what insight
    /// reads of them (where each went and how it ended), the rest left empty.
    pub fn version_runs(&mut self, zone_id: &str, seq: i64, since: i64) -> Result<Vec<Run>> {
        // Only the columns insight reads (the others are JSON it would parse for nothing).
        let columns = "run_id, current_node, visited_nodes, node_choices, started_at_ms,
                       completed_at_ms, outcome, boss_defeated, abandoned";
        let filter = "WHERE zone_id = ?1 AND zone_file_seq = ?2 AND current_node != ''
                        AND started_at_ms >= ?3";
        let key = self.conn.run_key();
        let mut rows = self.conn.query(
            &format!("SELECT {columns} FROM dnd_zone_run {filter} ORDER BY {key}"),
            &vals![zone_id, seq, since],
        )?;
        rows.extend(self.conn.query(
            &format!(
                "SELECT {columns} FROM zone_run_history {filter} ORDER BY archived_at_ms, run_id"
            ),
            &vals![zone_id, seq, since],
        )?);
        let mut runs = Vec::with_capacity(rows.len());
        for r in &rows {
            let columns = RunColumns {
                id: 0,
                user_id: String::new(),
                version: 0,
                link_token: String::new(),
                run_id: r.text(0)?,
                zone_id: zone_id.to_string(),
                current_node: r.text(1)?,
                visited_nodes: r.text(2)?,
                node_choices: r.text(3)?,
                cleared_regions: "[]".into(),
                harvested_nodes: "{}".into(),
                keys_granted: "[]".into(),
                revealed_secrets: "[]".into(),
                started_at_ms: r.int(4)?,
                last_action_at_ms: r.opt_int(5)?.unwrap_or(0),
                completed_at_ms: r.opt_int(5)?,
                boss_defeated: r.flag(7)?,
                abandoned: r.flag(8)?,
                outcome: r.text(6)?,
                missed_passages: "[]".into(),
                zone_file_seq: Some(seq),
            };
            runs.push(columns.decode()?.run);
        }
        Ok(runs)
    }
}
