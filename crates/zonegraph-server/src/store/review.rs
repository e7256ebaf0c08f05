//! What publishing a new version of a zone would do, against a database (`zonegraph review`,
//! `POST /api/zones/{zone_id}/review`): the change and the zone's figures
//! ([`zonegraph_core::impact`]), the players in the zone now and the served version's stored
//! runs replayed on the new one ([`zonegraph_core::review`]). Nothing is written.

use anyhow::{Result, bail};
use serde::Serialize;
use zonegraph_core::impact::{Impact, impact};
use zonegraph_core::review::{Review, review};

use crate::db;

/// A review of a new version against the served one.
#[derive(Debug, Serialize)]
pub struct VersionReview {
    /// The served version the new one would replace.
    pub version: i64,
    pub impact: Impact,
    #[serde(flatten)]
    pub review: Review,
    /// The players now and the replay in sentences.
    pub words: Vec<String>,
}

/// Why a review cannot be made.
#[derive(Debug)]
pub enum Unreviewable {
    /// The database serves no zone of this id.
    NoZone,
    /// The new file does not read as a zone file: where and why.
    BadFile(String),
}

/// The review of `new_text` against `zone_id`'s newest version in `db`.
pub fn of_database(
    db: &db::Database,
    zone_id: &str,
    new_text: &str,
) -> Result<Result<VersionReview, Unreviewable>> {
    let versions = db.read(|tx| tx.versions_of(zone_id))?;
    let Some(row) = versions.iter().rev().find(|r| !r.withdrawn) else {
        return Ok(Err(Unreviewable::NoZone));
    };
    let seq = row.seq;
    let new_file = match zonegraph_core::format::parse(new_text) {
        Ok(f) => f,
        Err(e) => return Ok(Err(Unreviewable::BadFile(e.located()))),
    };
    let Some(old_text) = db.read(|tx| tx.version_file(seq))? else {
        bail!("version {seq} of {zone_id} has no file in the database");
    };
    let old_file = zonegraph_core::format::parse(&old_text)
        .map_err(|e| anyhow::anyhow!("version {seq} of {zone_id}: {}", e.located()))?;
    let (old_zone, _) = zonegraph_core::zone::build(&old_file);
    let (new_zone, _) = zonegraph_core::zone::build(&new_file);
    let runs = db.read(|tx| tx.version_runs(zone_id, seq, 0))?;
    let impact = impact(&old_file, &new_file);
    let review = review(&old_zone, &new_zone, &impact, &runs);
    let words = zonegraph_core::review::words(seq, &review);
    Ok(Ok(VersionReview {
        version: seq,
        impact,
        review,
        words,
    }))
}
