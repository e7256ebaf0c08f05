//! Play insight and change review at the sizes a busy zone reaches: insight over 100,000
//! stored runs of one version on SQLite (goal: at most 1 s), the core's part alone, and the
//! diff and impact of two 1,000-room versions (goal: the diff in at most 50 ms), and the
//! review of a new version against those 100,000 runs (players now and the replay).
//!
//! The runs are played through the bot's command pipeline in memory (players of levels 1–4
//! taking the first or last open way), stored with the server's own statements, then read
//! back by `zonegraph_server::store::insight::of_database` as `zonegraph insight` and the API do.
//!
//! `cargo bench -p zonegraph-tests --bench insight` (ZONEGRAPH_BENCH_RUNS, default 100000).

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use zonegraph_server::db::{Database, DbAt, Upgrade};
use zonegraph_tests::client::load::env_usize;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut took = Vec::with_capacity(n);
    let mut last = None;
    for _ in 0..n {
        let start = Instant::now();
        last = Some(f());
        took.push(start.elapsed());
    }
    (median(took), last.expect("at least one"))
}

fn main() -> Result<()> {
    let n = env_usize("ZONEGRAPH_BENCH_RUNS", 100_000);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = tempfile::tempdir()?;
    let at = DbAt::Sqlite(dir.path().join("z.db"));
    let db = Database::open_as(&at, Upgrade::Migrate)?;
    zonegraph_server::store::catalog::Catalog::open(&db, &root.join("zones"))?;
    let seq = db
        .read(|tx| tx.versions_of("crypt_valdris"))?
        .last()
        .context("the crypt was imported")?
        .seq;
    let text = std::fs::read_to_string(root.join("zones/crypt_valdris.json"))?;
    let (zone, _) = zonegraph_core::zone::load(&text).map_err(|e| anyhow::anyhow!("{e}"))?;

    let start = Instant::now();
    let runs = zonegraph_tests::seed::played_runs(&zone, n);
    let played = start.elapsed();
    let start = Instant::now();
    zonegraph_tests::seed::store_runs(&db, seq, &runs)?;
    let stored = start.elapsed();
    println!("{n} runs of crypt_valdris: played in {played:.2?}, stored in {stored:.2?}");

    let (core, i) = time(5, || zonegraph_core::insight::insight(&zone, &runs));
    println!("insight, the core alone over {n} runs in memory: {core:.2?} (median of 5)");
    let (whole, found) = time(5, || {
        zonegraph_server::store::insight::of_database(&db, "crypt_valdris", None, 0)
    });
    let found = found?.context("the zone")?;
    anyhow::ensure!(
        found.insight == i,
        "the database's runs read back differently"
    );
    println!(
        "insight from SQLite (read, decode, compute) over {n} runs: {whole:.2?} (median of 5; goal 1 s)"
    );

    // Review before publishing over the same runs: the chapel's ways out sealed by a key
    // nobody holds, every run replayed on its own version and on the new one.
    let mut sealed: serde_json::Value = serde_json::from_str(&text)?;
    for e in sealed["edges"].as_array_mut().context("edges")? {
        if e["from_node"] == "crypt_valdris.side_chapel" {
            e["lock_kind"] = "key_required".into();
            e["lock_data"] = serde_json::json!({"key_id": "lost_sigil"});
        }
    }
    let sealed = sealed.to_string();
    let (r, review) = time(3, || {
        zonegraph_server::store::review::of_database(&db, "crypt_valdris", &sealed, n, &|| false)
    });
    let review = review?.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    println!(
        "review from SQLite (impact, players now, {n} runs replayed twice): {r:.2?} (median of 3): {} now stranded",
        review.review.replay.now_stranded
    );

    // Change review: two versions of a 1,000-room zone, 10 passages gone and 5 rooms renamed.
    let old = zonegraph_core::synth::layered("big", 1_000, 8, 7);
    let mut new = old.clone();
    if let Some(edges) = new.edges.as_mut() {
        for k in 0..10 {
            edges.remove(k * 50);
        }
    }
    for n in new
        .nodes
        .iter_mut()
        .flatten()
        .skip(100)
        .step_by(150)
        .take(5)
    {
        let from = n.node_id.clone();
        n.node_id = format!("{from}_renamed");
        for e in new.edges.iter_mut().flatten() {
            for end in [&mut e.from_node, &mut e.to_node] {
                if *end == from {
                    *end = n.node_id.clone();
                }
            }
        }
    }
    let (d, diff) = time(11, || zonegraph_core::diff::diff(&old, &new));
    println!(
        "diff of two 1,000-room versions: {d:.2?} (median of 11; goal 50 ms): {} passages removed",
        diff.passages_removed.len()
    );
    let (m, impact) = time(5, || zonegraph_core::impact::impact(&old, &new));
    println!(
        "impact (diff, renames, figures and findings before and after): {m:.2?} (median of 5): {} renamed",
        impact.renamed.len()
    );
    Ok(())
}
