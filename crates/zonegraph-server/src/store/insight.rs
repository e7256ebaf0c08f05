//! Play insight from a database (`zonegraph insight`, `GET /api/zones/{zone_id}/insight`):
//! one zone version's stored runs read by [`zonegraph_core::insight`], the version's own file
//! as the model. No player id is read out of the runs, and none is written.

use anyhow::{Result, bail};
use serde::Serialize;
use zonegraph_core::insight::{Insight, Tally};

use crate::db;

/// A version's insight, with which version it is.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VersionInsight {
    pub version: i64,
    #[serde(flatten)]
    pub insight: Insight,
}

/// The insight of `zone_id`'s version `version` (the newest not withdrawn when `None`) from
/// runs started at or after `since`; `None` when the database has no such zone or version.
pub fn of_database(
    db: &db::Database,
    zone_id: &str,
    version: Option<i64>,
    since: i64,
) -> Result<Option<VersionInsight>> {
    let versions = db.read(|tx| tx.versions_of(zone_id))?;
    let row = match version {
        Some(v) => versions.iter().find(|r| r.seq == v && !r.withdrawn),
        None => versions.iter().rev().find(|r| !r.withdrawn),
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let seq = row.seq;
    let Some(text) = db.read(|tx| tx.version_file(seq))? else {
        bail!("version {seq} of {zone_id} has no file in the database");
    };
    let (zone, _) = zonegraph_core::zone::load(&text)
        .map_err(|e| anyhow::anyhow!("version {seq} of {zone_id}: {}", e.located()))?;
    // Each run is added as it is read: a season of runs is never held at once.
    let mut tally = Tally::new(&zone);
    db.read(|tx| tx.each_version_run(zone_id, seq, since, &mut |run| tally.add(&run)))?;
    Ok(Some(VersionInsight {
        version: seq,
        insight: tally.insight(),
    }))
}
