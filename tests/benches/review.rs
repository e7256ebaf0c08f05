//! Change review within its budget (issue 41): how long `POST /api/zones/{id}/review` takes
//! as zones and their stored runs grow, with the server's default `--review-runs`
//! ([`REVIEW_RUNS`]: the most recent ended runs replayed), and the replay's cost per run as
//! a run gets longer (corridors of 100, 300, 1,000 and 3,000 rooms that every run walks whole).
//!
//! Each zone is imported into a new SQLite database; its runs are played through the bot's
//! command pipeline in memory ([`zonegraph_tests::seed`]) and stored with the server's own
//! statements; then `zonegraph_server::store::review::of_database` (what the route and
//! `zonegraph review` call) reviews a new version of it, the zone renamed: every run is
//! replayed on its own version and on the new one.
//!
//! `cargo bench -p zonegraph-tests --bench review` (ZONEGRAPH_BENCH_RUNS: the most runs
//! stored, default 100000).

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use zonegraph_core::format::{NodeKind, ZoneFile};
use zonegraph_server::db::{Database, DbAt, Upgrade};
use zonegraph_server::store::review::{REVIEW_RUNS, of_database};
use zonegraph_tests::client::load::env_usize;

/// A database of its own holding `file` and `n` played runs of it; how long playing them
/// took, and how many rooms a run reached on average.
fn stored(file: &ZoneFile, n: usize) -> Result<(tempfile::TempDir, Database, Duration, f64)> {
    let dir = tempfile::tempdir()?;
    let zones = dir.path().join("zones");
    std::fs::create_dir(&zones)?;
    std::fs::write(
        zones.join(format!("{}.json", file.zone_id)),
        serde_json::to_string(file)?,
    )?;
    let db = Database::open_as(&DbAt::Sqlite(dir.path().join("z.db")), Upgrade::Migrate)?;
    zonegraph_server::store::catalog::Catalog::open(&db, &zones)?;
    let seq = db
        .read(|tx| tx.versions_of(&file.zone_id))?
        .last()
        .context("the zone was imported")?
        .seq;
    let (zone, _) = zonegraph_core::zone::build(file);
    let start = Instant::now();
    let runs = zonegraph_tests::seed::played_runs(&zone, n);
    let played = start.elapsed();
    let rooms = runs.iter().map(|r| r.visited_nodes.len()).sum::<usize>() as f64 / n as f64;
    zonegraph_tests::seed::store_runs(&db, seq, &runs)?;
    Ok((dir, db, played, rooms))
}

/// The median of 3 reviews of `file` renamed, replaying at most `most_recent` runs; and
/// how many runs it replayed.
fn review(db: &Database, file: &ZoneFile, most_recent: usize) -> Result<(Duration, u64)> {
    let mut new = file.clone();
    new.name = format!("{} (new)", new.name);
    let text = serde_json::to_string(&new)?;
    let mut took = Vec::new();
    let mut replayed = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let r = of_database(db, &file.zone_id, &text, most_recent, &|| false)?
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        took.push(start.elapsed());
        replayed = r.review.replay.runs.0;
    }
    took.sort();
    Ok((took[1], replayed))
}

fn main() -> Result<()> {
    let most = env_usize("ZONEGRAPH_BENCH_RUNS", 100_000);
    let crypt: ZoneFile = serde_json::from_str(&std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../zones/crypt_valdris.json"),
    )?)?;
    println!("| zone | rooms | runs stored | runs replayed | review (median of 3) |");
    println!("|---|---|---|---|---|");
    let cases: Vec<(&str, ZoneFile, usize)> = vec![
        ("crypt_valdris", crypt, most),
        (
            "layered, 8 wide",
            zonegraph_core::synth::layered("layered_1000", 1_000, 8, 7),
            most / 10,
        ),
        (
            "layered, 8 wide",
            zonegraph_core::synth::layered("layered_1000", 1_000, 8, 7),
            most,
        ),
    ];
    for (name, file, n) in &cases {
        let (_dir, db, played, _) = stored(file, *n)?;
        let (took, replayed) = review(&db, file, REVIEW_RUNS)?;
        println!(
            "| {name} | {} | {n} | {replayed} | {took:.2?} |",
            file.nodes.as_ref().map_or(0, Vec::len)
        );
        eprintln!("  ({n} runs played in {played:.2?})");
    }

    // The replay's cost per run as runs get longer: corridors, every run walks all of it.
    println!();
    println!(
        "| corridor | rooms a run reaches (mean) | runs | review, all replayed | per run | per room reached |"
    );
    println!("|---|---|---|---|---|---|");
    for rooms in [100, 300, 1_000, 3_000] {
        // A plain chain of exploration rooms: every run walks all of it to the boss.
        let mut file = zonegraph_core::synth::layered(&format!("corridor_{rooms}"), rooms, 1, 7);
        for node in file.nodes.iter_mut().flatten() {
            if !matches!(node.kind, NodeKind::Entry | NodeKind::Boss) {
                node.kind = NodeKind::Exploration;
            }
        }
        let n = 1_000;
        let (_dir, db, _, reached) = stored(&file, n)?;
        let (took, replayed) = review(&db, &file, n)?;
        let per_run = took / u32::try_from(replayed.max(1))?;
        let per_room = per_run.as_secs_f64() * 1e6 / reached;
        println!(
            "| {rooms} rooms | {reached:.0} | {replayed} | {took:.2?} | {per_run:.2?} | {per_room:.2} µs |"
        );
    }
    Ok(())
}
