//! Load generator: N simulated players complete Crypt of Valdris runs through
//! `POST /api/command` concurrently against an in-process server on loopback, with a
//! temporary database; then a bare loop of SQLite write transactions with the same
//! durability settings (WAL, synchronous = FULL) on the same disk, the physical limit.
//!
//! `cargo bench -p zonegraph-server --bench load` (ZONEGRAPH_BENCH_PLAYERS, default 200;
//! ZONEGRAPH_BENCH_RUNS, runs per player, default 3). Figures go to BENCHMARKS.md.

use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use zonegraph_server::client::Conn;
use zonegraph_server::db;
use zonegraph_server::serve::{self, ServerConfig};

/// One run of the Crypt by the main hall: every command changes the run. Then `!zone
/// advance` fights the elite and the boss until the run ends (a lost round is a wound, which
/// changes the run too); the players' scores make that one round each most of the time.
const OPENING: &[&str] = &[
    "!zone enter crypt_valdris",
    "!zone advance",
    "!zone advance",
    "!zone go 1",
];
/// Most fights per run: 3 wounds end a run, so two encounters never take more.
const MAX_FIGHTS: usize = 6;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Write transactions per second for 3 s: one row of about a run's size, updated in its own
/// transaction, on a fresh database with the server's settings.
fn bare_loop(path: &std::path::Path) -> anyhow::Result<f64> {
    let conn = db::open(path)?;
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")?;
    conn.execute("INSERT INTO t VALUES (1, '')", [])?;
    let payload = "x".repeat(600);
    let mut n = 0u64;
    let bare_start = Instant::now();
    while bare_start.elapsed() < Duration::from_secs(3) {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        conn.execute(
            "UPDATE t SET v = ?1 WHERE id = 1",
            [format!("{payload}{n}")],
        )?;
        conn.execute_batch("COMMIT")?;
        n += 1;
    }
    Ok(n as f64 / bare_start.elapsed().as_secs_f64())
}

fn main() -> anyhow::Result<()> {
    let players = env_usize("ZONEGRAPH_BENCH_PLAYERS", 200);
    let runs = env_usize("ZONEGRAPH_BENCH_RUNS", 3);
    let zones = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../zones");
    let dir = tempfile::tempdir()?;

    let tps_before = bare_loop(&dir.path().join("bare-before.db"))?;
    let mut config = ServerConfig::new(dir.path().join("load.db"), zones, "127.0.0.1:0".parse()?);
    // A load test: every player sends as fast as it can, so no rate limit.
    config.limits.rate = None;
    config.auth = serve::Auth::Token("bench".into());
    // Strong sheets: most fights are won in one round (see OPENING).
    config.game.starting_scores = [30; 6];
    let server = serve::spawn(config)?;
    let addr = server.addr;
    let barrier = Arc::new(Barrier::new(players + 1));
    let threads: Vec<_> = (0..players)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || -> anyhow::Result<Vec<Duration>> {
                let user = format!("@player{i}:bench");
                let mut c = Conn::connect(addr)?.with_token(Some("bench"));
                let mut lat = Vec::with_capacity(runs * (OPENING.len() + 2));
                barrier.wait();
                for _ in 0..runs {
                    let fights = std::iter::repeat_n(&"!zone advance", MAX_FIGHTS);
                    for cmd in OPENING.iter().chain(fights) {
                        let t = Instant::now();
                        let r = c.command(&user, cmd, None)?;
                        lat.push(t.elapsed());
                        anyhow::ensure!(r.status == 200, "{cmd}: {}", r.text());
                        let said = r.text();
                        if said.contains("Victory!") || said.contains("defeat") {
                            break;
                        }
                    }
                    let last = c.command(&user, "!zone status", None)?.text();
                    anyhow::ensure!(last.contains("This run is over"), "run not over: {last}");
                }
                Ok(lat)
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let mut lat = Vec::new();
    for t in threads {
        lat.extend(
            t.join()
                .map_err(|_| anyhow::anyhow!("player thread panicked"))??,
        );
    }
    let elapsed = start.elapsed();
    let stored = server.store.all_runs()?.len();
    server.stop()?;
    anyhow::ensure!(stored == players * runs, "{stored} runs stored");
    lat.sort();
    let cps = lat.len() as f64 / elapsed.as_secs_f64();

    let tps_after = bare_loop(&dir.path().join("bare-after.db"))?;
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
