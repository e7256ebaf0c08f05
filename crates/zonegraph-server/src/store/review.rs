//! What publishing a new version of a zone would do, against a database (`zonegraph review`,
//! `POST /api/zones/{zone_id}/review`): the change and the zone's figures
//! ([`zonegraph_core::impact`]), the players in the zone now and the served version's stored
//! runs replayed on the new one ([`zonegraph_core::review`]). Nothing is written.

use anyhow::{Result, bail};
use serde::Serialize;
use zonegraph_core::impact::{Impact, impact};
use zonegraph_core::insight::Count;
use zonegraph_core::review::{Review, review_until};

use crate::db;

/// How many ended runs a review replays by default (`--review-runs`): the most recent ones.
/// Chosen so that a review of a 1,000-room zone stays within about 2 s on a 2-core machine
/// (BENCHMARKS.md, "Change review within its budget": 1.42 s at 100,000 stored).
pub const REVIEW_RUNS: usize = 10_000;

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
    /// The review was given up: nobody waits for it any more.
    Stopped,
    /// Another review of this zone is running on this instance.
    Busy,
}

/// The review of `new_text` against `zone_id`'s newest version in `db`, over the runs going
/// and the `most_recent` ended runs that started last; given up when `stop` says so (asked
/// while the runs are read, and before each run is replayed).
pub fn of_database(
    db: &db::Database,
    zone_id: &str,
    new_text: &str,
    most_recent: usize,
    stop: &dyn Fn() -> bool,
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
    let Some(read) = db.read(|tx| tx.recent_version_runs(zone_id, seq, most_recent, stop))? else {
        return Ok(Err(Unreviewable::Stopped));
    };
    let impact = impact(&old_file, &new_file);
    let Some(mut review) = review_until(&old_zone, &new_zone, &impact, &read.runs, stop) else {
        return Ok(Err(Unreviewable::Stopped));
    };
    review.left_out = Count(read.left_out);
    let words = zonegraph_core::review::words(seq, &review);
    Ok(Ok(VersionReview {
        version: seq,
        impact,
        review,
        words,
    }))
}
