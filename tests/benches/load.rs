//! Load generator: N simulated players complete Crypt of Valdris runs through
//! `POST /api/command` concurrently against an in-process server on loopback, with a
//! temporary database; then a bare loop of SQLite write transactions with the same
//! durability settings (WAL, synchronous = FULL) on the same disk, the physical limit.
//!
//! `cargo bench -p zonegraph-tests --bench load` (ZONEGRAPH_BENCH_PLAYERS, default 200;
//! ZONEGRAPH_BENCH_RUNS, runs per player, default 3). Figures go to BENCHMARKS.md.

use std::path::PathBuf;

use zonegraph_server::db;
use zonegraph_server::server::{self as serve, ServerConfig};
use zonegraph_tests::client::load::{crypt_runs, env_usize, percentile};

fn main() -> anyhow::Result<()> {
    let players = env_usize("ZONEGRAPH_BENCH_PLAYERS", 200);
    let runs = env_usize("ZONEGRAPH_BENCH_RUNS", 3);
    let zones = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../zones");
    let dir = tempfile::tempdir()?;

    let tps_before = db::bare_write_rate(&dir.path().join("bare-before.db"))?;
    let mut config = ServerConfig::new(dir.path().join("load.db"), zones, "127.0.0.1:0".parse()?);
    // A load test: every player sends as fast as it can, so no rate limit.
    config.limits.rate = None;
    config.auth = serve::Auth::Token("bench".into());
    // Strong sheets: most fights are won in one round (see OPENING).
    config.game.starting_scores = [30; 6];
    let server = serve::spawn(config)?;
    let (elapsed, lat) = crypt_runs(&[server.addr], "bench", players, runs)?;
    let stored = server.store.all_runs()?.len();
    server.stop()?;
    anyhow::ensure!(stored == players * runs, "{stored} runs stored");
    let cps = lat.len() as f64 / elapsed.as_secs_f64();

    let tps_after = db::bare_write_rate(&dir.path().join("bare-after.db"))?;
    let tps = (tps_before + tps_after) / 2.0;

    println!("zonegraph server load: {players} players x {runs} Crypt runs");
    println!(
        "  {} commands (all state-changing) in {:.2} s: {cps:.0} commands/s",
        lat.len(),
        elapsed.as_secs_f64()
    );
    println!(
        "  latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(&lat, 0.50).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
        percentile(&lat, 1.0).as_secs_f64() * 1e3
    );
    println!(
        "  bare SQLite write transactions (WAL, synchronous=FULL): {tps:.0}/s \
         (before {tps_before:.0}/s, after {tps_after:.0}/s)"
    );
    println!("  ratio: {:.0} % of the bare loop", cps / tps * 100.0);
    Ok(())
}
